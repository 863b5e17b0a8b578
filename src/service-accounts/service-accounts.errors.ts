import { ConflictError, NotFoundError } from '../common/errors/domain.error.js';

export class ServiceAccountNotFoundError extends NotFoundError {
  constructor() {
    super('service account');
  }
}

/** The team has as many service accounts as the deployment allows one (SERVICE_ACCOUNTS_PER_TEAM). */
export class ServiceAccountLimitError extends ConflictError {
  constructor(limit: number) {
    super(
      'service_account_limit',
      limit === 0
        ? 'This deployment allows teams no service accounts.'
        : `A team may have at most ${limit} service accounts: delete one first.`,
      'name',
    );
  }
}

export class ServiceAccountNameTakenError extends ConflictError {
  constructor() {
    super('service_account_name_taken', 'The team has a service account of that name.', 'name');
  }
}
