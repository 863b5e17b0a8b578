import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { Trim, VisibleText } from '../../../common/validation/transforms.js';
import { MAX_CREDENTIAL_LENGTH } from '../../../passkeys/passkey-credentials.js';

export const PASSKEY_NAME_MAX = 100;

/** A passkey's name, as the person gives it. */
export class PasskeyNameForm {
  @Trim()
  @VisibleText('Name')
  @MaxLength(PASSKEY_NAME_MAX, { message: `Name can be at most ${PASSKEY_NAME_MAX} characters.` })
  @IsNotEmpty({ message: 'Give the passkey a name.' })
  @IsString({ message: 'Give the passkey a name.' })
  name!: string;
}

/** The browser's answer to a passkey challenge, as the page's script puts it in the form. */
export class PasskeyCredentialForm {
  @MaxLength(MAX_CREDENTIAL_LENGTH, { message: 'That passkey could not be verified.' })
  @IsString({ message: 'Use the passkey button: the browser answers for you.' })
  credential!: string;

  /** Where to go once signed in (the sign-in page's `return_to`). */
  @IsOptional()
  @IsString()
  return_to?: string;
}

/** Adding a passkey: its name and the browser's answer. */
export class AddPasskeyForm extends PasskeyNameForm {
  @MaxLength(MAX_CREDENTIAL_LENGTH, { message: 'That passkey could not be verified.' })
  @IsString({ message: 'Use the button: your browser makes the passkey.' })
  credential!: string;
}
