import { IsString, Length } from 'class-validator';
import { SameAs } from '../users/dto/user-fields.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../users/dto/create-user.dto.js';

/**
 * The new password and its confirmation. Checked after the current password (the service does
 * both), so a form wrong in both ways hears of both at once.
 */
export class NewPasswordFields {
  @Length(PASSWORD_MIN, PASSWORD_MAX, {
    message: `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  })
  @IsString({ message: 'Choose a new password.' })
  password!: string;

  @SameAs('password', 'The passwords do not match.')
  @IsString({ message: 'Confirm the new password.' })
  password_confirmation!: string;
}
