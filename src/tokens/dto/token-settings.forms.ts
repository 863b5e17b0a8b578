import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { ToInteger, Trim, VisibleText } from '../../common/validation/transforms.js';
import { ABILITIES, type Ability } from '../abilities.js';
import { TOKEN_NAME_MAX } from './create-token.dto.js';
import { CheckboxList } from './create-token.form.js';

/** A day: the longest the old value of a regenerated token may keep working. */
export const MAX_GRACE_MINUTES = 1440;

/** The token page's form for a token's name and abilities; its value does not change. */
export class UpdateTokenForm {
  @Trim()
  @VisibleText('Name')
  @Length(1, TOKEN_NAME_MAX, { message: `Name must be 1 to ${TOKEN_NAME_MAX} characters.` })
  @IsString({ message: 'Give the token a name.' })
  name!: string;

  @CheckboxList()
  @IsIn(ABILITIES, { each: true, message: `Abilities must be among ${ABILITIES.join(', ')}.` })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsArray({ message: 'Abilities must be a list.' })
  abilities: Ability[] = [];
}

/** Regenerating: how long the value being replaced keeps working, in minutes (none by default). */
export class RegenerateTokenForm {
  @ToInteger()
  @Max(MAX_GRACE_MINUTES, { message: `The grace period is at most ${MAX_GRACE_MINUTES} minutes.` })
  @Min(0, { message: 'The grace period cannot be negative.' })
  @IsInt({ message: 'Give the grace period as a whole number of minutes.' })
  grace_minutes: number = 0;

  /**
   * The value the page showed (its version): the form replaces that value only, so the same
   * form sent twice regenerates once. Without it, whatever value the token has is replaced.
   */
  @IsOptional()
  @Matches(/^\d{1,16}$/, { message: 'Reload the page and try again.' })
  version?: string;
}
