import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsString, MaxLength } from 'class-validator';
import { DeliverableAddress } from '../../users/dto/user-fields.js';
import { EMAIL_MAX, normalizeEmail } from '../../users/email.js';

export const ASSIGNABLE_ROLES = ['member', 'admin'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

export class AddMemberDto {
  @DeliverableAddress()
  @Transform(({ value }) => (typeof value === 'string' ? normalizeEmail(value) : value))
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(EMAIL_MAX, { message: `Email must be at most ${EMAIL_MAX} characters.` })
  @IsString({ message: 'Email must be text.' })
  email!: string;

  @IsIn(ASSIGNABLE_ROLES, { message: `Role must be one of ${ASSIGNABLE_ROLES.join(', ')}.` })
  role: AssignableRole = 'member';
}
