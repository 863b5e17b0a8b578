import { ForbiddenError } from './errors/domain.error.js';

/** Where a request came from, as the security log records it. */
export interface Client {
  ip: string | null;
  userAgent: string | null;
}

/** A person signed in through the browser, in the session with this handle. */
export interface PersonActor {
  kind: 'person';
  userId: number;
  /** The session's handle (a digest of its id, as the sessions page names it). */
  session: string | null;
  client: Client;
  /**
   * What the page's request read of the person on arrival, in one query (their teams, the
   * current one, two-factor): services take it from here instead of reading those rows again.
   */
  known?: PersonSnapshot;
}

/** A team as its row holds it (the teams feature's `Team` is one). */
export interface TeamRecord {
  id: number;
  name: string;
  slug: string;
  ownerId: number;
  personal: boolean;
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  allowedAbilities: string[] | null;
  serviceAccountCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The signed-in person's teams and two-factor state, as read once per page request. */
export interface PersonSnapshot {
  email: string;
  /** When their address was confirmed; null while it waits for its link. */
  emailVerifiedAt: Date | null;
  currentTeamId: number | null;
  /** Their teams with their role in each, by name. */
  memberships: readonly { team: TeamRecord; role: 'owner' | 'admin' | 'member' }[];
  twoFactor: boolean;
}

/** What the request already knows of the actor's account, when it is a page's person. */
export function knownOf(actor: Actor): PersonSnapshot | undefined {
  return actor.kind === 'person' ? actor.known : undefined;
}

/** A person's token, on the API. */
export interface TokenActor {
  kind: 'token';
  userId: number;
  tokenId: number;
  /** What the token may do, when the actor comes from the request it authenticated. */
  abilities?: readonly string[];
  client: Client;
}

/**
 * The operator at the command line: any team may be managed, but the domain's rules still hold.
 * `userId` is the account the command acts on, when it acts on one (`token:create --email`).
 */
export interface OperatorActor {
  kind: 'operator';
  userId?: number;
}

/** Tessera itself: a timer's work (reminders, pruning). */
export interface SystemActor {
  kind: 'system';
}

/** Someone not signed in: a sign-in attempt, a reset link's form, a registration. */
export interface VisitorActor {
  kind: 'visitor';
  client: Client;
}

/**
 * Whoever acts: built once per request (`@CurrentActor()`), by the command line or by a timer,
 * and passed first to every service method that acts, and on to the security log.
 */
export type Actor = PersonActor | TokenActor | OperatorActor | SystemActor | VisitorActor;

const NO_CLIENT: Client = { ip: null, userAgent: null };

export const Actors = {
  operator: (userId?: number): OperatorActor => ({ kind: 'operator', userId }),
  system: { kind: 'system' } as SystemActor,
  /** A person outside a request (a test's set-up, a subscriber acting for the person). */
  person: (userId: number, client: Client = NO_CLIENT, session: string | null = null) =>
    ({ kind: 'person', userId, session, client }) satisfies PersonActor,
  visitor: (client: Client = NO_CLIENT): VisitorActor => ({ kind: 'visitor', client }),
};

/** Thrown when an actor without an account reaches code that acts on one: a bug, not input. */
export class NoAccountError extends Error {
  constructor(actor: Actor) {
    super(`A ${actor.kind} acts on no account here`);
  }
}

/** What only the operator at the command line may do (list every account, disable one). */
export class OperatorOnlyError extends ForbiddenError {
  constructor() {
    super('Only an operator may do this.');
  }
}

/** Refuses anyone but the operator. */
export function requireOperator(actor: Actor): OperatorActor {
  if (actor.kind !== 'operator') throw new OperatorOnlyError();
  return actor;
}

/** The account the actor acts on: their own, or the one the operator named. */
export function accountOf(actor: Actor): number {
  if (actor.kind === 'person' || actor.kind === 'token') return actor.userId;
  if (actor.kind === 'operator' && actor.userId !== undefined) return actor.userId;
  throw new NoAccountError(actor);
}

/** The same actor acting on the account it has just become (a visitor who registered). */
export function asPerson(actor: Actor, userId: number): PersonActor {
  return {
    kind: 'person',
    userId,
    session: actor.kind === 'person' ? actor.session : null,
    client: 'client' in actor ? actor.client : NO_CLIENT,
  };
}

/** The actor's client, when it came by a request. */
export function clientOf(actor: Actor): Client {
  return 'client' in actor ? actor.client : NO_CLIENT;
}
