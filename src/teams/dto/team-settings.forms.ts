import { IsIn, IsInt, Min } from 'class-validator';
import { ToInteger } from '../../common/validation/transforms.js';
import { ASSIGNABLE_ROLES, type AssignableRole } from './add-member.dto.js';

export class ChangeRoleForm {
  @IsIn(ASSIGNABLE_ROLES, { message: `Role must be one of ${ASSIGNABLE_ROLES.join(', ')}.` })
  role!: AssignableRole;
}

export class TransferTeamForm {
  @ToInteger()
  @Min(1, { message: 'Choose the member who will own the team.' })
  @IsInt({ message: 'Choose the member who will own the team.' })
  user_id!: number;
}
