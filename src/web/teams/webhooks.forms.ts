import { IsArray, IsOptional, IsString, Length, Matches, ValidateBy } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';
import { urlFormProblem } from '../../webhooks/address-policy.js';

/**
 * The URL's form, checked with the form's other fields (the service checks it again, with the
 * addresses its name resolves to).
 */
const WebhookUrl = (): PropertyDecorator =>
  ValidateBy({
    name: 'webhookUrl',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || urlFormProblem(value) === null,
      defaultMessage: (args) => `The URL ${urlFormProblem(String(args?.value))}.`,
    },
  });
import { CheckboxList } from '../settings/api-tokens/tokens.forms.js';

/**
 * A new endpoint, as the team's webhooks page gives it: its URL and the events it gets. Only
 * their types are checked here: the service checks the URL (with the addresses its name
 * resolves to) and the events together, so that every mistake is told at once.
 */
export class CreateWebhookForm {
  @Trim()
  @IsString({ message: 'Give the endpoint a URL.' })
  url!: string;

  @CheckboxList()
  @IsString({ each: true, message: 'Each event is named like token.created.' })
  @IsArray({ message: 'Events must be a list.' })
  events: string[] = [];
}

/**
 * A new audit stream: the collector's URL, and the Authorization header value it wants, if any
 * (`Splunk <token>` for Splunk's HTTP Event Collector).
 */
export class CreateAuditStreamForm {
  @Trim()
  @WebhookUrl()
  @Length(1, 2048, { message: 'Give the collector a URL of at most 2048 characters.' })
  @IsString({ message: 'Give the collector a URL.' })
  url!: string;

  @Trim()
  @IsOptional()
  @Length(0, 500, { message: 'The Authorization value is at most 500 characters.' })
  @IsString({ message: 'The Authorization value is text.' })
  authorization?: string;
}

/** Rotating an endpoint's secret, from its page. */
export class RotateWebhookSecretForm {
  /**
   * The secret the page showed (its version): only that one is replaced, so the same form sent
   * twice rotates once. Without it, whatever secret the endpoint has is replaced.
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{16}$/, { message: 'Reload the page and try again.' })
  version?: string;
}
