import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { TEAM_AUDIT_KINDS, type AuditKind } from '../../../audit/audit-events.js';
import { DeliverableAddress, NormalizedEmail } from '../../../users/dto/user-fields.js';
import { EMAIL_MAX } from '../../../users/email.js';
import { ASSIGNABLE_ROLES, type AssignableRole } from '../../../teams/dto/add-member.dto.js';
import { PageQuery } from '../conventions/pagination.js';

const ROLE_MESSAGE = `role must be one of ${ASSIGNABLE_ROLES.join(', ')}.`;

/** `POST /api/v1/team/invitations`: whom to invite, and as what. */
export class CreateInvitationBody {
  @ApiProperty({
    format: 'email',
    example: 'ann@example.com',
    maxLength: EMAIL_MAX,
    description: `At most ${EMAIL_MAX} characters as stored: lower-cased, its domain in ASCII.`,
  })
  @DeliverableAddress()
  @NormalizedEmail()
  @IsEmail({}, { message: 'Enter a valid email address.' })
  @MaxLength(EMAIL_MAX, { message: `email is at most ${EMAIL_MAX} characters.` })
  @IsString({ message: 'email must be text.' })
  email!: string;

  @ApiPropertyOptional({ enum: ASSIGNABLE_ROLES, default: 'member' })
  // Left out, the default; given, even as null, one of the roles.
  @ValidateIf((_body: CreateInvitationBody, role: unknown) => role !== undefined)
  @IsIn(ASSIGNABLE_ROLES, { message: ROLE_MESSAGE })
  role: AssignableRole = 'member';
}

/** `PATCH /api/v1/team/members/{id}`: the member's new role. */
export class UpdateMemberBody {
  @ApiProperty({ enum: ASSIGNABLE_ROLES, example: 'admin' })
  @IsIn(ASSIGNABLE_ROLES, { message: ROLE_MESSAGE })
  role!: AssignableRole;
}

/** `GET /api/v1/team/audit-log`: the page's filter (`kind`) and the list's page. */
export class AuditLogQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: TEAM_AUDIT_KINDS,
    description: 'Only events of this kind, as the page filters them.',
  })
  @IsOptional()
  @IsIn(TEAM_AUDIT_KINDS, {
    message: `kind must be one of: ${TEAM_AUDIT_KINDS.join(', ')}.`,
  })
  kind?: AuditKind;
}
