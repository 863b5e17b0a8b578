import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsString } from 'class-validator';
import { DeliverableAddress } from '../../users/dto/user-fields.js';
import { normalizeEmail } from '../../users/email.js';

export const ASSIGNABLE_ROLES = ['member', 'admin'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

export class AddMemberDto {
  @DeliverableAddress()
  @Transform(({ value }) => (typeof value === 'string' ? normalizeEmail(value) : value))
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @IsString({ message: 'Email must be text.' })
  email!: string;

  @IsIn(ASSIGNABLE_ROLES, { message: `Role must be one of ${ASSIGNABLE_ROLES.join(', ')}.` })
  role: AssignableRole = 'member';
}
