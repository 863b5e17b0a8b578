import { Type } from 'class-transformer';
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
import { Trim } from '../../common/validation/trim.js';
import { ABILITIES, type Ability } from '../abilities.js';

export const TOKEN_NAME_MAX = 100;
export const MAX_EXPIRY_DAYS = 3650;

export class CreateTokenDto {
  @Trim()
  @IsString({ message: 'Name must be text.' })
  @Length(1, TOKEN_NAME_MAX, { message: `Name must be 1 to ${TOKEN_NAME_MAX} characters.` })
  name!: string;

  /** Defaults to every ability when left out. */
  @IsOptional()
  @IsArray({ message: 'Abilities must be a list.' })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsIn(ABILITIES, { each: true, message: `Abilities must be among ${ABILITIES.join(', ')}.` })
  abilities?: Ability[];

  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'Expiry must be a whole number of days.' })
  @Min(1, { message: 'Expiry must be at least 1 day.' })
  @Max(MAX_EXPIRY_DAYS, { message: `Expiry must be at most ${MAX_EXPIRY_DAYS} days.` })
  expiresInDays?: number;
}
