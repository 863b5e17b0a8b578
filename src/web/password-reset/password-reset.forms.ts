import { IsEmail, IsString, Length, MaxLength } from 'class-validator';
import { NormalizedEmail, SameAs } from '../../users/dto/user-fields.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../users/dto/create-user.dto.js';
import { EMAIL_MAX } from '../../users/email.js';

export class ForgotPasswordForm {
  @NormalizedEmail()
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(EMAIL_MAX, { message: `Email must be at most ${EMAIL_MAX} characters.` })
  @IsString({ message: 'Enter your email.' })
  email!: string;
}

export class ResetPasswordForm {
  @Length(PASSWORD_MIN, PASSWORD_MAX, {
    message: `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  })
  @IsString({ message: 'Choose a password.' })
  password!: string;

  @SameAs('password', 'The passwords do not match.')
  @IsString({ message: 'Confirm the password.' })
  password_confirmation!: string;
}
