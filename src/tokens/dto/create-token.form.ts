import { Transform } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
} from 'class-validator';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { ABILITIES, type Ability } from '../abilities.js';
import { DATE_PATTERN, TOKEN_NAME_MAX, type CreateTokenDto } from './create-token.dto.js';

export const EXPIRY_CHOICES = ['7', '30', '90', '365', 'custom', 'none'] as const;
type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];

/** One ticked checkbox arrives as a string, several as a list, none as nothing. */
export const CheckboxList = () =>
  Transform(({ value }) =>
    value === undefined ? [] : typeof value === 'string' ? [value] : value,
  );

/** The "new token" form of Account Settings > API Tokens, with the page's field names. */
export class CreateTokenForm {
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

  /** Left out: `custom` when a date is given, else 30 days. */
  @IsOptional()
  @IsIn(EXPIRY_CHOICES, { message: 'Choose an expiry from the list.' })
  expires_in_days?: ExpiryChoice;

  /** The date of the `custom` choice, YYYY-MM-DD (UTC). */
  @ValidateIf((form: CreateTokenForm) => expiryChoice(form) === 'custom')
  @Matches(DATE_PATTERN, { message: 'Enter the date as YYYY-MM-DD.' })
  @IsString({ message: 'Choose the date the token stops working.' })
  expires_at?: string;
}

function expiryChoice(form: CreateTokenForm): ExpiryChoice {
  return form.expires_in_days ?? (form.expires_at ? 'custom' : '30');
}

export function toCreateTokenDto(form: CreateTokenForm): CreateTokenDto {
  const choice = expiryChoice(form);
  return {
    name: form.name,
    abilities: form.abilities,
    ...(choice === 'custom'
      ? { expiresOn: form.expires_at }
      : choice === 'none'
        ? {}
        : { expiresInDays: Number(choice) }),
  };
}
