import { ConflictError, NotFoundError, ValidationError } from '../common/errors/domain.error.js';

export class WebhookEndpointNotFoundError extends NotFoundError {
  constructor() {
    super('webhook endpoint');
  }
}

export class WebhookDeliveryNotFoundError extends NotFoundError {
  constructor() {
    super('webhook delivery');
  }
}

/** The secret was rotated since the page showed it (the same click, sent twice): unchanged. */
export class WebhookSecretChangedError extends ValidationError {
  constructor() {
    super({
      secret:
        'The signing secret was rotated at the same moment elsewhere: nothing more was changed. Look at the endpoint again before rotating it.',
    });
  }
}

/** An endpoint listed in WEBHOOK_ENDPOINTS changes there only. */
export class ConfiguredEndpointError extends ValidationError {
  constructor(field: string) {
    super({
      [field]:
        'This endpoint is listed in WEBHOOK_ENDPOINTS: change or remove it there, and restart.',
    });
  }
}

/** The team has as many endpoints as the deployment allows one (WEBHOOK_ENDPOINTS_PER_TEAM). */
export class WebhookEndpointLimitError extends ConflictError {
  constructor(limit: number) {
    super(
      'webhook_endpoint_limit',
      limit === 0
        ? 'This deployment allows teams no webhooks or audit streams.'
        : `A team may have at most ${limit} webhooks and audit streams together: delete one first.`,
      'url',
    );
  }
}
