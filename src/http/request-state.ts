import type { IncomingMessage } from 'node:http';
import type { Actor } from '../common/actor.js';

/**
 * What a request learns on its way in and its later steps read: who acts (built once, see
 * `actorOf` in http/access.ts) and, for a form, the page it came from. Kept beside the request,
 * typed here, instead of declared onto Express's Request for every module to read unseen.
 */
interface RequestState {
  actor?: Actor;
  form?: FormOrigin;
}

/** The page whose form posted the request and that form's fields (the only ones kept). */
export interface FormOrigin {
  page: string;
  fields: readonly string[];
}

const states = new WeakMap<IncomingMessage, RequestState>();

function stateOf(req: IncomingMessage): RequestState {
  let state = states.get(req);
  if (!state) states.set(req, (state = {}));
  return state;
}

/** Who acts in the request, once it is known. */
export function actorOn(req: IncomingMessage): Actor | undefined {
  return states.get(req)?.actor;
}

export function setActor<A extends Actor>(req: IncomingMessage, actor: A): A {
  stateOf(req).actor = actor;
  return actor;
}

/** The form that posted the request, when its route says (`@FormPage`). */
export function formOriginOf(req: IncomingMessage): FormOrigin | undefined {
  return states.get(req)?.form;
}

export function setFormOrigin(req: IncomingMessage, form: FormOrigin): void {
  stateOf(req).form = form;
}

/** The user id of the person or token acting in the request, for its log line and limits. */
export function actingUserOf(req: IncomingMessage): number | undefined {
  const actor = actorOn(req);
  return actor && (actor.kind === 'person' || actor.kind === 'token') ? actor.userId : undefined;
}
