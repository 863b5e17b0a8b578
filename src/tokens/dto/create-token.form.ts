import { Transform } from 'class-transformer';
import { ArrayNotEmpty, IsArray, IsIn, IsString, Length } from 'class-validator';
import { Trim, VisibleText } from '../../common/validation/transforms.js';
import { ABILITIES, type Ability } from '../../common/auth/abilities.js';
import { TOKEN_NAME_MAX, type CreateTokenDto } from './create-token.dto.js';

export const EXPIRY_CHOICES = ['7', '30', '90', '365', 'none'] as const;

/** The "new token" form of Account Settings > API Tokens, with the page's field names. */
export class CreateTokenForm {
  @Trim()
  @VisibleText('Name')
  @Length(1, TOKEN_NAME_MAX, { message: `Name must be 1 to ${TOKEN_NAME_MAX} characters.` })
  @IsString({ message: 'Give the token a name.' })
  name!: string;

  // One ticked checkbox arrives as a string, several as a list, none as nothing.
  @Transform(({ value }) =>
    value === undefined ? [] : typeof value === 'string' ? [value] : value,
  )
  @IsIn(ABILITIES, { each: true, message: `Abilities must be among ${ABILITIES.join(', ')}.` })
  @ArrayNotEmpty({ message: 'Choose at least one ability.' })
  @IsArray({ message: 'Abilities must be a list.' })
  abilities: Ability[] = [];

  @IsIn(EXPIRY_CHOICES, { message: 'Choose an expiry from the list.' })
  expires_in_days: (typeof EXPIRY_CHOICES)[number] = 'none';
}

export function toCreateTokenDto(form: CreateTokenForm): CreateTokenDto {
  return {
    name: form.name,
    abilities: form.abilities,
    expiresInDays: form.expires_in_days === 'none' ? undefined : Number(form.expires_in_days),
  };
}
