import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { ToInteger, Trim, VisibleText } from '../../../common/validation/transforms.js';
import type { Ability } from '../../../tokens/abilities.js';
import { ABILITY_NAME } from '../../../config/abilities.config.js';
import {
  DATE_PATTERN,
  TOKEN_NAME_MAX,
  type CreateTokenDto,
} from '../../../tokens/dto/create-token.dto.js';
import { Transform } from 'class-transformer';

/** One ticked checkbox arrives as a string, several as a list, none as nothing. */
export const CheckboxList = () =>
  Transform(({ value }) =>
    value === undefined ? [] : typeof value === 'string' ? [value] : value,
  );

/** A day: the longest the old value of a regenerated token may keep working. */
export const MAX_GRACE_MINUTES = 1440;

/** The token page's form for a token's name and abilities; its value does not change. */
export class UpdateTokenForm {
  @Trim()
  @VisibleText('Name')
  @MaxLength(TOKEN_NAME_MAX, { message: `Name can be at most ${TOKEN_NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Give the token a name.' })
  @IsString({ message: 'Give the token a name.' })
  name!: string;

  @CheckboxList()
  @Matches(ABILITY_NAME, { each: true, message: 'Each ability is named resource:action.' })
  @IsString({ each: true, message: 'Each ability is named resource:action.' })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsArray({ message: 'Abilities must be a list.' })
  abilities: Ability[] = [];
}

export const LIFETIME_CHOICES = ['same', '7', '30', '90', '365', 'none'] as const;
export type LifetimeChoice = (typeof LIFETIME_CHOICES)[number];

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

  /** The new lifetime: `same` (the default) counts the lifetime it had again from now. */
  @IsOptional()
  @IsIn(LIFETIME_CHOICES, { message: 'Choose a lifetime from the list.' })
  lifetime?: LifetimeChoice;
}

/** The regenerate form's lifetime: undefined to keep the one it had, null for none, or days. */
export function lifetimeDaysOf(choice: LifetimeChoice | undefined): number | null | undefined {
  if (choice === undefined || choice === 'same') return undefined;
  return choice === 'none' ? null : Number(choice);
}

export const EXPIRY_CHOICES = ['7', '30', '90', '365', 'custom', 'none'] as const;
type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];

/**
 * A new token's form, with the page's field names: the name and abilities as the token page's
 * form has them, and an expiry (a service account's tokens are made with this one).
 */
export class NewTokenForm extends UpdateTokenForm {
  /** Left out: `custom` when a date is given, else 30 days. */
  @IsOptional()
  @IsIn(EXPIRY_CHOICES, { message: 'Choose an expiry from the list.' })
  expires_in_days?: ExpiryChoice;

  /** The date of the `custom` choice, YYYY-MM-DD (UTC). */
  @ValidateIf((form: NewTokenForm) => expiryChoice(form) === 'custom')
  @Matches(DATE_PATTERN, { message: 'Enter the date as YYYY-MM-DD.' })
  @IsString({ message: 'Choose the date the token stops working.' })
  expires_at?: string;
}

/** The "new token" form of Account Settings > API Tokens: a new token, and where it acts. */
export class CreateTokenForm extends NewTokenForm {
  /** `current` (the default): the token follows its person's current team; else a team's id. */
  @IsOptional()
  @Matches(/^(current|[1-9]\d{0,9})$/, { message: 'Choose one of your teams.' })
  @IsString({ message: 'Choose one of your teams.' })
  team?: string;
}

function expiryChoice(form: NewTokenForm): ExpiryChoice {
  return form.expires_in_days ?? (form.expires_at ? 'custom' : '30');
}

export function toCreateTokenDto(form: NewTokenForm & { team?: string }): CreateTokenDto {
  const choice = expiryChoice(form);
  return {
    name: form.name,
    abilities: form.abilities,
    ...(form.team && form.team !== 'current' ? { teamId: Number(form.team) } : {}),
    ...(choice === 'custom'
      ? { expiresOn: form.expires_at }
      : choice === 'none'
        ? {}
        : { expiresInDays: Number(choice) }),
  };
}
