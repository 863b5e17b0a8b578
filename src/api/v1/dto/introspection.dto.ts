import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

/**
 * Abilities by name, separated by spaces (or commas), as OAuth writes scopes. A separator must
 * follow each name (or the text end), so there is one way to read any text: checking costs time
 * in proportion to its length, whatever it holds.
 */
export const ABILITY_LIST = /^[\s,]*(?:[a-z][a-z0-9_-]{0,39}:[a-z][a-z0-9_-]{0,39}(?:[\s,]+|$))*$/;

/** `POST /api/v1/introspect`: RFC 7662's request, and what the service needs of the token. */
export class IntrospectionBody {
  @ApiProperty({
    description: 'The token presented to the service, as it was presented.',
    example: 'tsr_0123456789abcdefghijABCDEFGHIJ012345',
    maxLength: 1000,
  })
  @MaxLength(1000, { message: 'token is at most 1000 characters.' })
  @IsString({ message: 'token is the token presented to the service, as text.' })
  token!: string;

  @ApiPropertyOptional({
    description:
      "RFC 7662's hint at the kind of token (`access_token`, `refresh_token`…). Tessera has one kind, and looks the token up the same way whatever the hint says, as RFC 7662 asks of a server the hint does not help.",
    example: 'access_token',
    maxLength: 100,
  })
  // Left out, nothing asked; given, even as null, text.
  @ValidateIf((_body: IntrospectionBody, value: unknown) => value !== undefined)
  @MaxLength(100, { message: 'token_type_hint is at most 100 characters.' })
  @IsString({ message: 'token_type_hint is a kind of token, as text.' })
  token_type_hint?: string;

  @ApiPropertyOptional({
    description:
      'Abilities the service needs the token to have, separated by spaces (as OAuth scopes): the answer says whether the API would refuse any, with its own code (`refusal`).',
    example: 'invoices:read invoices:write',
    maxLength: 2000,
  })
  // Left out, nothing asked; given, even as null, text.
  @ValidateIf((_body: IntrospectionBody, value: unknown) => value !== undefined)
  @MaxLength(2000, { message: 'required_abilities is at most 2000 characters.' })
  @Matches(ABILITY_LIST, {
    message: 'required_abilities are ability names (resource:action) separated by spaces.',
  })
  @IsString({ message: 'required_abilities are ability names separated by spaces.' })
  required_abilities?: string;
}
