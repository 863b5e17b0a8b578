import { ConflictError, NotFoundError, ValidationError } from '../common/errors/domain.error.js';

/** The form field a passkey's answer arrives in. */
export const CREDENTIAL_FIELD = 'credential';

const REFUSED = 'That passkey could not be verified. Try again, or use another way.';

/**
 * A passkey's answer refused: a challenge used, expired or from another session, a wrong site
 * or origin, a signature that does not verify, a credential that is not the person's, or a
 * counter gone backwards. One message: what failed is for the security log, not for a caller.
 */
export class PasskeyRefusedError extends ValidationError {
  constructor(message = REFUSED) {
    super({ [CREDENTIAL_FIELD]: message });
  }
}

export class PasskeyNotFoundError extends NotFoundError {
  constructor() {
    super('passkey');
  }
}

export class TooManyPasskeysError extends ConflictError {
  constructor(max: number) {
    super(
      'too_many_passkeys',
      `You have ${max} passkeys, the most an account may have: remove one first.`,
      CREDENTIAL_FIELD,
    );
  }
}

export class PasskeyAlreadyAddedError extends ConflictError {
  constructor() {
    super('passkey_exists', 'This passkey is added already.', CREDENTIAL_FIELD);
  }
}
