import { IsEmail, IsNotEmpty, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { Transform } from 'class-transformer';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { EMAIL_MAX, normalizeEmail } from '../email.js';
import { DeliverableAddress } from './user-fields.js';

export const NAME_MAX = 100;
export const PASSWORD_MIN = 8;
// argon2 accepts longer input, but a cap stops megabyte "passwords" from costing hashing time.
export const PASSWORD_MAX = 1024;

export class CreateUserDto {
  @Trim()
  @VisibleText('Name')
  @MaxLength(NAME_MAX, { message: `Name can be at most ${NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Enter a name.' })
  @IsString({ message: 'Name must be text.' })
  name!: string;

  @DeliverableAddress()
  @Transform(({ value }) => (typeof value === 'string' ? normalizeEmail(value) : value))
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(EMAIL_MAX, { message: `Email must be at most ${EMAIL_MAX} characters.` })
  @IsString({ message: 'Email must be text.' })
  email!: string;

  @IsOptional()
  @Length(PASSWORD_MIN, PASSWORD_MAX, {
    message: `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  })
  @IsString({ message: 'Password must be text.' })
  password?: string;
}
