import { Controller, Get } from '@nestjs/common';
import { BearerAuth } from '../../auth/auth-policy.decorator.js';
import { CurrentUser } from '../../common/decorators/principal.decorator.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { toUserProfile, type UserProfile } from '../../users/user.view.js';

@Controller('api/v1/user')
export class UserController {
  /** The profile of the user who owns the presented token. */
  @Get('profile')
  @BearerAuth('user:read')
  profile(@CurrentUser() user: UserProfile): SuccessEnvelope<UserProfile> {
    return success(toUserProfile(user));
  }
}
