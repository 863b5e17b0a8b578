import { ToInteger } from '../../common/validation/transforms.js';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';

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
