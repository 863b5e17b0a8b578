import { NotFoundError } from '../common/errors/domain.error.js';

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
