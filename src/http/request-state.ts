import type { IncomingMessage } from 'node:http';
import type { Actor } from '../common/actor.js';
import type { TokenPrincipal } from '../tokens/token-authenticator.js';

/**
 * What a request learns on its way in and its later steps read: its id, the token the API's
 * authentication accepted, who acts (built once, see `actorOf` in http/access.ts) and, for a
 * form, the page it came from. Typed here and read only through these functions, instead of on
 * fields that Express's Request is declared to have for every module to read unseen (`req.user`,
 * `req.id`).
 */
interface RequestState {
  id?: string;
  token?: TokenPrincipal;
  actor?: Actor;
  form?: FormOrigin;
}

/** The page whose form posted the request and that form's fields (the only ones kept). */
export interface FormOrigin {
  page: string;
  fields: readonly string[];
}

/**
 * Kept on the request under a symbol only this file knows: one property, added to every request
 * in the same place, read as cheaply as `req.id` was.
 */
const STATE = Symbol('tessera.request-state');

type Stated = IncomingMessage & { [STATE]?: RequestState };

function stateOf(req: IncomingMessage): RequestState {
  return ((req as Stated)[STATE] ??= {});
}

function known(req: IncomingMessage): RequestState | undefined {
  return (req as Stated)[STATE];
}

/** The id on the request's response and log lines (given by the first middleware). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return known(req)?.id;
}

export function setRequestId(req: IncomingMessage, id: string): void {
  stateOf(req).id = id;
}

/** The token the API's authentication accepted for this request, within its budget. */
export function tokenOn(req: IncomingMessage): TokenPrincipal | undefined {
  return known(req)?.token;
}

export function setToken(req: IncomingMessage, principal: TokenPrincipal): void {
  stateOf(req).token = principal;
}

/** Who acts in the request, once it is known. */
export function actorOn(req: IncomingMessage): Actor | undefined {
  return known(req)?.actor;
}

export function setActor<A extends Actor>(req: IncomingMessage, actor: A): A {
  stateOf(req).actor = actor;
  return actor;
}

/** The form that posted the request, when its route says (`@FormPage`). */
export function formOriginOf(req: IncomingMessage): FormOrigin | undefined {
  return known(req)?.form;
}

export function setFormOrigin(req: IncomingMessage, form: FormOrigin): void {
  stateOf(req).form = form;
}

/** The user id of the person or token acting in the request, for its log line and limits. */
export function actingUserOf(req: IncomingMessage): number | undefined {
  const token = tokenOn(req);
  if (token) return token.user.id;
  const actor = actorOn(req);
  return actor && (actor.kind === 'person' || actor.kind === 'token') ? actor.userId : undefined;
}
