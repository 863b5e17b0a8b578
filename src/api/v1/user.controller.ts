import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentUser } from './api-authentication.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { toUserProfile, type UserProfile } from '../../users/user.view.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { UserProfileEnvelope } from './openapi/schemas.js';

@ApiTags('API v1')
@Controller('api/v1/user')
export class UserController {
  /** The profile of the user who owns the presented token. */
  @Get('profile')
  @ApiEndpoint({
    ability: 'user:read',
    summary: "The token owner's profile",
    description: 'The profile of the user who owns the presented token: id, name and email.',
    envelope: UserProfileEnvelope,
  })
  profile(@CurrentUser() user: UserProfile): SuccessEnvelope<UserProfile> {
    return success(toUserProfile(user));
  }
}
