import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
} from 'class-validator';
import { ToInteger, Trim, VisibleText } from '../../common/validation/transforms.js';
import { ABILITIES, type Ability } from '../../common/auth/abilities.js';

export const TOKEN_NAME_MAX = 100;
export const MAX_EXPIRY_DAYS = 3650;

export class CreateTokenDto {
  @Trim()
  @VisibleText('Name')
  @Length(1, TOKEN_NAME_MAX, { message: `Name must be 1 to ${TOKEN_NAME_MAX} characters.` })
  @IsString({ message: 'Name must be text.' })
  name!: string;

  /** Defaults to every ability when left out. */
  @IsOptional()
  @IsIn(ABILITIES, { each: true, message: `Abilities must be among ${ABILITIES.join(', ')}.` })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsArray({ message: 'Abilities must be a list.' })
  abilities?: Ability[];

  @IsOptional()
  @ToInteger()
  @Max(MAX_EXPIRY_DAYS, { message: `Expiry must be at most ${MAX_EXPIRY_DAYS} days.` })
  @Min(1, { message: 'Expiry must be at least 1 day.' })
  @IsInt({ message: 'Expiry must be a whole number of days.' })
  expiresInDays?: number;
}
