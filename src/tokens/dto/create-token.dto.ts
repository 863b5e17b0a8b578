import {
  ArrayNotEmpty,
  IsArray,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { ToInteger, Trim, VisibleText } from '../../common/validation/transforms.js';
import type { Ability } from '../abilities.js';
import { ABILITY_NAME } from '../../config/abilities.config.js';
import { TOKEN_LIFETIME_LIMIT_DAYS } from '../../config/tokens.config.js';

export const TOKEN_NAME_MAX = 100;
export const MAX_EXPIRY_DAYS = TOKEN_LIFETIME_LIMIT_DAYS;
export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

export class CreateTokenDto {
  @Trim()
  @VisibleText('Name')
  @MaxLength(TOKEN_NAME_MAX, { message: `Name can be at most ${TOKEN_NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Give the token a name.' })
  @IsString({ message: 'Name must be text.' })
  name!: string;

  /** The catalog's defaults when left out; names the catalog does not offer are refused. */
  @IsOptional()
  @Matches(ABILITY_NAME, { each: true, message: 'Each ability is named resource:action.' })
  @IsString({ each: true, message: 'Each ability is named resource:action.' })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsArray({ message: 'Abilities must be a list.' })
  abilities?: Ability[];

  @IsOptional()
  @ToInteger()
  @Max(MAX_EXPIRY_DAYS, { message: `Expiry must be at most ${MAX_EXPIRY_DAYS} days.` })
  @Min(1, { message: 'Expiry must be at least 1 day.' })
  @IsInt({ message: 'Expiry must be a whole number of days.' })
  expiresInDays?: number;

  /** A UTC date (YYYY-MM-DD) instead of a number of days: the token works until it begins. */
  @IsOptional()
  @Matches(DATE_PATTERN, { message: 'Enter the date as YYYY-MM-DD.' })
  @IsString({ message: 'Enter the date as YYYY-MM-DD.' })
  expiresOn?: string;

  /**
   * The team the token is pinned to, one its person is a member of; left out, the token follows
   * its person's current team.
   */
  @IsOptional()
  @Min(1, { message: 'Choose one of your teams.' })
  @IsInt({ message: 'Choose one of your teams.' })
  teamId?: number;
}
