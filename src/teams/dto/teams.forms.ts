import { IsIn, IsInt, IsOptional, IsString, Min } from 'class-validator';
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

export class SwitchTeamForm {
  @ToInteger()
  @Min(1, { message: 'Choose a team.' })
  @IsInt({ message: 'Choose a team.' })
  team_id!: number;

  /** The page the switch was made from, to go back to; anything but a page of ours is ignored. */
  @IsOptional()
  @IsString()
  return_to?: string;
}
