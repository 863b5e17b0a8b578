import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Trim, VisibleText } from '../../common/validation/transforms.js';

export const TEAM_NAME_MAX = 100;

export class CreateTeamDto {
  @Trim()
  @VisibleText('Team name')
  @MaxLength(TEAM_NAME_MAX, { message: `Team name can be at most ${TEAM_NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Give the team a name.' })
  @IsString({ message: 'Team name must be text.' })
  name!: string;
}
