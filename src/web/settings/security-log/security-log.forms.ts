import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { ToInteger, Trim } from '../../../common/validation/transforms.js';
import { AUDIT_KINDS, type AuditKind } from '../../../audit/audit-events.js';

/** The filter and the page of a log: `?kind=token&before=812`. */
export class AuditLogQuery {
  @IsOptional()
  @Trim()
  @IsIn(['', ...Object.keys(AUDIT_KINDS)], {
    message: `kind must be one of: ${Object.keys(AUDIT_KINDS).join(', ')}.`,
  })
  kind?: AuditKind | '';

  @IsOptional()
  @ToInteger()
  @IsInt({ message: 'before must be an event number.' })
  @Min(1, { message: 'before must be an event number.' })
  @Max(2_147_483_647, { message: 'before must be an event number.' })
  before?: number;
}
