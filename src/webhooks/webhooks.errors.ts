import { NotFoundError, ValidationError } from '../common/errors/domain.error.js';

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
