import { IsEmail, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { DeliverableAddress, NormalizedEmail } from '../../users/dto/user-fields.js';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { NAME_MAX, PASSWORD_MAX } from '../../users/dto/create-user.dto.js';
import { EMAIL_MAX } from '../../users/email.js';

export class ChangePasswordForm {
  @MaxLength(PASSWORD_MAX, { message: 'That is not your password.' })
  @IsNotEmpty({ message: 'Enter your current password.' })
  @IsString({ message: 'Enter your current password.' })
  current_password!: string;

  /** Its rules are NewPasswordFields', checked with the current password. */
  @IsString({ message: 'Choose a new password.' })
  password!: string;

  @IsString({ message: 'Confirm the new password.' })
  password_confirmation!: string;
}

/** The password, asked again for signing out elsewhere and for deleting the account. */
export class PasswordForm {
  @MaxLength(PASSWORD_MAX, { message: 'That is not your password.' })
  @IsNotEmpty({ message: 'Enter your password.' })
  @IsString({ message: 'Enter your password.' })
  password!: string;
}

/** Signing out everywhere else: the password, and whether the passkeys go too. */
export class SignOutOthersForm extends PasswordForm {
  /** A ticked checkbox sends `on`; an unticked one sends nothing. */
  @IsOptional()
  @IsIn(['on'], { message: 'Tick the box, or leave it empty.' })
  remove_passkeys?: 'on';
}

export class ProfileForm {
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
}

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
