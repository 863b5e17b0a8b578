import {
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  Length,
  MaxLength,
} from 'class-validator';
import { DeliverableAddress, NormalizedEmail, SameAs } from '../../users/dto/user-fields.js';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { NAME_MAX, PASSWORD_MAX, PASSWORD_MIN } from '../../users/dto/create-user.dto.js';

export class ChangePasswordForm {
  @MaxLength(PASSWORD_MAX, { message: 'That is not your password.' })
  @IsNotEmpty({ message: 'Enter your current password.' })
  @IsString({ message: 'Enter your current password.' })
  current_password!: string;

  @Length(PASSWORD_MIN, PASSWORD_MAX, {
    message: `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  })
  @IsString({ message: 'Choose a new password.' })
  password!: string;

  @SameAs('password', 'The passwords do not match.')
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
  @Length(1, NAME_MAX, { message: `Name must be 1 to ${NAME_MAX} characters.` })
  @IsString({ message: 'Name must be text.' })
  name!: string;

  @DeliverableAddress()
  @NormalizedEmail()
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(255, { message: 'Email must be at most 255 characters.' })
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
