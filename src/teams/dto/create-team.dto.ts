import { IsString, Length } from 'class-validator';
import { Trim, VisibleText } from '../../common/validation/transforms.js';

export const TEAM_NAME_MAX = 100;

export class CreateTeamDto {
  @Trim()
  @VisibleText('Team name')
  @Length(1, TEAM_NAME_MAX, { message: `Team name must be 1 to ${TEAM_NAME_MAX} characters.` })
  @IsString({ message: 'Team name must be text.' })
  name!: string;
}
