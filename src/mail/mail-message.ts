import type { EntityManager } from 'typeorm';

/** A message ready to send. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Makes the message of one kind when it is about to be sent, in a transaction of its own (a
 * composer may issue the token its link carries), or returns null when there is nothing to
 * send any more (no such account, an address already confirmed).
 */
export type MailComposer = (
  manager: EntityManager,
  request: { to: string; params: Record<string, unknown> },
) => Promise<MailMessage | null>;
