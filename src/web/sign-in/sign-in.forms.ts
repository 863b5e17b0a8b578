import {
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Length,
  MaxLength,
} from 'class-validator';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { NAME_MAX, PASSWORD_MAX, PASSWORD_MIN } from '../../users/dto/create-user.dto.js';
import { DeliverableAddress, NormalizedEmail, SameAs } from '../../users/dto/user-fields.js';
import { EMAIL_MAX } from '../../users/email.js';

/** The sign-up form: field names as the page posts them. */
export class RegisterForm {
  @Trim()
  @VisibleText('Name')
  @MaxLength(NAME_MAX, { message: `Name can be at most ${NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Enter your name.' })
  @IsString({ message: 'Name must be text.' })
  name!: string;

  @DeliverableAddress()
  @NormalizedEmail()
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(EMAIL_MAX, { message: `Email must be at most ${EMAIL_MAX} characters.` })
  @IsString({ message: 'Email must be text.' })
  email!: string;

  @Length(PASSWORD_MIN, PASSWORD_MAX, {
    message: `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  })
  @IsString({ message: 'Password must be text.' })
  password!: string;

  @SameAs('password', 'The passwords do not match.')
  @IsString({ message: 'Confirm the password.' })
  password_confirmation!: string;

  /** The invitation link the person came from: they join its team once their address is confirmed. */
  @IsOptional()
  @MaxLength(100)
  @IsString()
  invitation?: string;
}

export class LoginForm {
  @NormalizedEmail()
  @MaxLength(EMAIL_MAX, { message: `Email must be at most ${EMAIL_MAX} characters.` })
  @IsNotEmpty({ message: 'Enter your email.' })
  @IsString({ message: 'Enter your email.' })
  email!: string;

  @MaxLength(PASSWORD_MAX, { message: 'These credentials do not match our records.' })
  @IsNotEmpty({ message: 'Enter your password.' })
  @IsString({ message: 'Enter your password.' })
  password!: string;

  /** The page to go on to after signing in; anything but a page of ours is ignored. */
  @IsOptional()
  @IsString()
  return_to?: string;

  /** "Keep me signed in": a ticked checkbox sends `on`. */
  @IsOptional()
  @IsIn(['on'], { message: 'Tick the box, or leave it empty.' })
  remember?: 'on';
}
