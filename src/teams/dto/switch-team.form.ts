import { Type } from 'class-transformer';
import { IsInt, Min } from 'class-validator';

export class SwitchTeamForm {
  @Type(() => Number)
  @Min(1, { message: 'Choose a team.' })
  @IsInt({ message: 'Choose a team.' })
  team_id!: number;
}
