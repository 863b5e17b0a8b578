import type { Actor } from '../common/actor.js';

/** What happened to a team's service accounts, as the event dispatcher carries it. */
export interface ServiceAccountEvent {
  actor: Actor;
  account: { id: number; name: string; description: string | null };
  team: { id: number; name: string };
}

declare module '../events/events.js' {
  interface DomainEvents {
    /** A team's owner or admin (or the operator) made a service account. */
    'service_account.created': ServiceAccountEvent;
    /** A service account was deleted, and its tokens with it. */
    'service_account.deleted': ServiceAccountEvent;
  }
}
