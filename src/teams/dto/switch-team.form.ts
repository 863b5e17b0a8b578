import { ToInteger } from '../../common/validation/transforms.js';
import { IsInt, Min } from 'class-validator';

export class SwitchTeamForm {
  @ToInteger()
  @Min(1, { message: 'Choose a team.' })
  @IsInt({ message: 'Choose a team.' })
  team_id!: number;
}
