import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PASSWORD_MAX } from '../../users/dto/create-user.dto.js';

export class ConfirmPasswordForm {
  @MaxLength(PASSWORD_MAX, { message: 'That is not your password.' })
  @IsNotEmpty({ message: 'Enter your password.' })
  @IsString({ message: 'Enter your password.' })
  password!: string;

  /** The page to go back to; anything but a page of ours is ignored. */
  @IsOptional()
  @IsString()
  return_to?: string;
}
