import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** Longer than any code with spaces or dashes typed in; anything past it is not a code. */
const CODE_MAX = 64;

/** The code from the app that confirms a new setup. */
export class ConfirmTwoFactorForm {
  @MaxLength(CODE_MAX, { message: 'Enter the 6-digit code from your authenticator app.' })
  @IsNotEmpty({ message: 'Enter the 6-digit code from your authenticator app.' })
  @IsString({ message: 'Enter the 6-digit code from your authenticator app.' })
  code!: string;
}

/** The second step of signing in: a code from the app, or a recovery code. */
export class TwoFactorChallengeForm {
  @IsOptional()
  @MaxLength(CODE_MAX, { message: 'Enter the 6-digit code from your authenticator app.' })
  @IsString({ message: 'Enter the 6-digit code from your authenticator app.' })
  code?: string;

  @IsOptional()
  @MaxLength(CODE_MAX, { message: 'That recovery code is not valid, or it has been used.' })
  @IsString({ message: 'Enter one of your recovery codes.' })
  recovery_code?: string;
}

/** New recovery codes, from the security page. */
export class NewRecoveryCodesForm {
  /**
   * The set of codes the page showed (its version): only that set is replaced, so the same
   * form sent twice makes one set. Without it, whatever set there is is replaced.
   */
  @IsOptional()
  @Matches(/^\d{1,16}$/, { message: 'Reload the page and try again.' })
  version?: string;
}
