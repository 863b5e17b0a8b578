import { Inject, Injectable, Logger, type NestMiddleware, type OnModuleInit } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import { createHmac, randomBytes } from 'node:crypto';
import { Clock } from '../../clock/clock.js';
import { takeFlash } from '../flash.js';
import type { Config } from '../../config/config.js';
import { CONFIG } from '../../config/config.module.js';
import { Transactions } from '../../database/transactions.js';
import { Scheduler } from '../../scheduler/scheduler.js';
import { CrossSiteRequestError } from '../../auth/auth.errors.js';
import { fetchSiteOf } from './request-site.js';
import {
  pageSession,
  type Flash,
  type PageSessionData,
  SESSION_ACTIVITY_EVERY_MS,
} from './page-session.js';
import { webCookiesFor, type WebCookies } from './web-cookies.js';
import { SessionsRepository, type SessionRow } from '../../auth/sessions.repository.js';
import { TeamsService } from '../../teams/teams.service.js';
import type { SignedInPerson } from '../../teams/teams.repository.js';

/**
 * The pages' session, in one place: the session (express-session over the store below) and
 * CSRF protection. `WebSession` runs them as one middleware for every page request (configureApp
 * mounts it on the pages' branch only; the API never reads a session); the page context reads
 * the signed-in person next.
 */

/** How long a session nobody signed in to lives without use. */
export const GUEST_SESSION_MS = 15 * 60_000;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CROSS_SITE_FORM =
  'This form was sent from another site, so Tessera did not act on it. Open Tessera yourself, from its address, and try again.';
const PRUNE_EVERY_MS = 5 * 60_000;

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * express-session's store over TypeORM, so that any instance serves any session on SQLite and
 * MySQL alike. The maintained stores are MySQL-only or unmaintained, hence this small one.
 */
@Injectable()
export class TypeormSessionStore extends session.Store implements OnModuleInit {
  private readonly logger = new Logger('Sessions');
  /** The id each request generated and has not stored yet. */
  private readonly created = new WeakMap<Request, string>();
  /** Sessions written during their request: nothing more to do for them when it ends. */
  private readonly written = new WeakSet<object>();
  /** The person each session was read with, from `get` until express-session makes it the request's. */
  private readonly people = new WeakMap<object, SignedInPerson | null>();
  /** Each session as read, from `get` until express-session makes it the request's. */
  private readonly readAs = new WeakMap<object, StoredSession>();
  /** Each request's session as it was read or last written, to tell what the request changed. */
  private readonly stored = new WeakMap<Request, StoredSession>();

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly teams: TeamsService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {
    super();
  }

  /**
   * The session, read with the person signed in to it in one query: the page context takes the
   * person from here (`signedInPersonOf`) instead of reading them again.
   */
  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.teams.findLiveSession(sid, this.clock.now()).then((found) => {
      if (!found) return callback(undefined, null);
      const data = parsedSession(found.data);
      if (!data) {
        // Only Tessera writes the row: one that is not a session's data was damaged. It is
        // no session, rather than a failed page for as long as the cookie lives.
        this.logger.warn('A session whose stored data is not a JSON object was ignored');
        return callback(undefined, null);
      }
      this.people.set(data, found.person);
      this.readAs.set(data, { version: found.version, json: found.data });
      callback(undefined, data);
    }, callback);
  }

  /**
   * express-session makes what `get` read the request's session here; the person is kept for
   * that session, so a session regenerated since (signed in, signed out) has none.
   */
  override createSession(
    req: Request,
    data: session.SessionData,
  ): session.Session & session.SessionData {
    const made = super.createSession(req, data);
    readWith.set(made, this.people.get(data) ?? null);
    const read = this.readAs.get(data);
    if (read) this.stored.set(req, read);
    return made;
  }

  /** Whether the request's session was read from a row (rather than made anew: none, or none left). */
  wasRead(req: Request): boolean {
    return this.stored.has(req);
  }

  /**
   * express-session's `genid`: a new session id, remembered for the request that made it. Only
   * that request may insert the session's row; every other write is an update, so a session
   * signed out (its row deleted) stays signed out even when a request that loaded it before
   * writes it back afterwards, on this instance or another.
   */
  generateId(req: Request): string {
    const id = randomBytes(24).toString('base64url');
    this.created.set(req, id);
    return id;
  }

  /**
   * Stores the request's session. A new one is inserted; one read before is written back whole
   * when nobody wrote it since, else only what this request changed in it is merged into the
   * row as it is now: the requests of one session (tabs, a burst) each read it, and one that
   * ends later must not put back what it read over what another wrote meanwhile (a password
   * change's new stamp, a two-factor setup started, a message to show).
   */
  override set(sid: string, stored: session.SessionData, callback?: Callback): void {
    const data = stored as session.SessionData & PageSessionData;
    // express-session hands over the request's Session, which holds its request.
    const req = (data as { req?: Request }).req;
    const insert = req !== undefined && this.created.get(req) === sid;
    if (insert) this.created.delete(req);
    this.written.add(data);
    const before = req && this.stored.get(req);
    this.store(sid, data, insert ? 'new' : before).then((written) => {
      if (req && written) this.stored.set(req, written);
      // Ended or replaced (signed out, signed in anew) while the request was under way: it
      // answers with no session, so its answer does not put the ended session's cookie back
      // over the browser's newer one (express-session sets no cookie for a request without).
      if (req && written === null && req.session === stored) {
        (req as { session?: unknown }).session = undefined;
      }
      callback?.();
    }, callback);
  }

  /**
   * Each write is one statement, run alone in autocommit on MySQL/MariaDB: the session's row is
   * locked for one round trip, not three, so a sign-out racing with a burst of the session's
   * own requests waits behind short writes. Only a write that lost the race to another reads
   * the row again, under its lock, to merge into it.
   */
  private async store(
    sid: string,
    data: session.SessionData & PageSessionData,
    before: StoredSession | 'new' | undefined,
  ): Promise<StoredSession | null> {
    const row = this.rowOf(sid, data);
    if (before === 'new') {
      await this.transactions.runStatement((m) => this.sessions.insert(m, row));
      return { version: 0, json: row.data };
    }
    if (
      before &&
      (await this.transactions.runStatement((m) => this.sessions.update(m, row, before.version)))
    ) {
      return { version: before.version + 1, json: row.data };
    }
    const changes = changesOf(before, data);
    return this.transactions.run(async (m) => {
      const current = await this.sessions.findForUpdate(m, sid);
      // Deleted meanwhile (signed out, revoked, ended by a password change): not brought back.
      if (!current) return null;
      const stored = (parsedSession(current.data) ?? {}) as SessionJson;
      const merged = this.rowOf(sid, merge(stored, changes));
      await this.sessions.update(m, merged, current.version);
      return { version: current.version + 1, json: merged.data };
    });
  }

  /**
   * Takes `key` out of the request's session as stored, in one step under the row's lock: its
   * value for the one request of the session that takes it, undefined for every other (another
   * request of the same session, on any instance, took it first). The request's own session
   * loses the key too, and is written back later over what this step wrote.
   */
  async take<K extends keyof PageSessionData>(
    req: Request,
    key: K,
  ): Promise<PageSessionData[K] | undefined> {
    const data = req.session as (session.Session & PageSessionData) | undefined;
    if (!data || data[key] === undefined) return undefined;
    delete data[key];
    const sid = req.sessionID;
    const taken = await this.transactions.run(async (m) => {
      const current = await this.sessions.findForUpdate(m, sid);
      const stored = current && (parsedSession(current.data) as SessionJson | undefined);
      if (!current || !stored || stored[key] === undefined) return undefined;
      const value = stored[key] as PageSessionData[K];
      delete stored[key];
      const row = this.rowOf(sid, stored as PageSessionData);
      await this.sessions.update(m, row, current.version);
      this.stored.set(req, { version: current.version + 1, json: row.data });
      return value;
    });
    return taken;
  }

  private rowOf(sid: string, data: PageSessionData & { cookie?: session.Cookie }): SessionRow {
    return {
      id: sid,
      userId: data.userId ?? null,
      data: JSON.stringify(data),
      expiresAt: this.expiryOf(data),
      userAgent: data.activity?.userAgent || null,
      ip: data.activity?.ip || null,
      lastActiveAt: data.activity ? new Date(data.activity.at) : null,
    };
  }

  override destroy(sid: string, callback?: Callback): void {
    this.transactions
      .runStatement((m) => this.sessions.delete(m, sid))
      .then(() => callback?.(), callback);
  }

  /**
   * express-session's "the session was used and not changed": a signed-in session's expiry
   * moves forward at most once every `SESSION_ACTIVITY_EVERY_MS`. A signed-in session notes its
   * activity that often (which changes it, so it is saved with its new expiry), so while its
   * activity is that recent its row needs nothing; nor does a session written earlier in the
   * same request.
   */
  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    const now = this.clock.nowMs();
    const { activity, userId } = data as PageSessionData;
    const noted = activity && now - activity.at < SESSION_ACTIVITY_EVERY_MS;
    // A visitor's session (a message, a sign-in under way) lasts GUEST_SESSION_MS from its last
    // change, its cookie as its row: viewing pages extends neither.
    if (noted || userId === undefined || this.written.has(data)) {
      callback?.();
      return;
    }
    this.transactions
      .runStatement((m) =>
        this.sessions.extend(m, sid, this.expiryOf(data), SESSION_ACTIVITY_EVERY_MS),
      )
      .then(() => callback?.(), callback);
  }

  onModuleInit(): void {
    this.scheduler.every('expired sessions', PRUNE_EVERY_MS, () => this.prune());
  }

  async prune(): Promise<number> {
    try {
      const now = this.clock.now();
      return await this.transactions.run((m) => this.sessions.deleteExpired(m, now));
    } catch (error) {
      this.logger.warn(`Could not prune expired sessions: ${String(error)}`);
      return 0;
    }
  }

  /**
   * When the session ends unless used again: its cookie's lifetime from now by the app's clock
   * (express-session dates the cookie itself by the machine's).
   */
  private expiryOf(data: { cookie?: session.Cookie }): Date {
    return new Date(this.clock.nowMs() + (data.cookie?.originalMaxAge ?? 86_400_000));
  }
}

/** A session as read or last written by a request: its version, and its data as JSON. */
interface StoredSession {
  version: number;
  json: string;
}

type SessionJson = Record<string, unknown>;

/** A session's stored data, or undefined when it is not a JSON object. */
function parsedSession(json: string): session.SessionData | undefined {
  try {
    const data: unknown = JSON.parse(json);
    return typeof data === 'object' && data !== null && !Array.isArray(data)
      ? (data as session.SessionData)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a request changed in the session it read: the keys it set and those it removed, with
 * the JSON it read of each (every key set, when nothing of what it read is known).
 */
interface SessionChanges {
  set: SessionJson;
  removed: string[];
  read: Map<string, string | undefined>;
}

/** Worked out only when a write lost a race: a page view that writes nothing pays nothing. */
function changesOf(before: StoredSession | undefined, data: object): SessionChanges {
  const entries = Object.entries(data);
  const read = before && (parsedSession(before.json) as SessionJson | undefined);
  if (!read) return { set: Object.fromEntries(entries), removed: [], read: new Map() };
  const set = entries.filter(([key, value]) => JSON.stringify(read[key]) !== JSON.stringify(value));
  const removed = Object.keys(read).filter((key) => !Object.hasOwn(data, key));
  return {
    set: Object.fromEntries(set),
    removed,
    read: new Map(
      [...set.map(([key]) => key), ...removed].map((key) => [key, JSON.stringify(read[key])]),
    ),
  };
}

/**
 * The row's data with a request's changes. A key it removed goes only if nobody wrote it since
 * (a page that showed a message takes it, not the one another request has left since); a
 * message it left beside one another request left since is shown with it.
 */
function merge(current: SessionJson, changes: SessionChanges) {
  const since = (key: string) => JSON.stringify(current[key]) !== changes.read.get(key);
  for (const key of changes.removed) if (!since(key)) delete current[key];
  for (const [key, value] of Object.entries(changes.set)) {
    const theirs = current[key];
    current[key] =
      key === 'flash' && theirs && value && since(key)
        ? bothMessages(theirs as Flash, value as Flash)
        : value;
  }
  return current as PageSessionData & { cookie?: session.Cookie };
}

/** Two requests' messages for the next page: both said; a refused form's state, the later's. */
function bothMessages(theirs: Flash, ours: Flash): Flash {
  const both = (a?: string, b?: string) => (a && b && a !== b ? `${a} ${b}` : (b ?? a));
  return {
    ...theirs,
    ...ours,
    notice: both(theirs.notice, ours.notice),
    error: both(theirs.error, ours.error),
  };
}

/**
 * Session, then CSRF, as one layer (the page context in web/ then reads the signed-in person):
 *
 * - **Session**: database-backed, HttpOnly, SameSite=Lax, Secure over HTTPS, idle timeout
 *   renewed with the activity noted once a minute; a visitor's session lives minutes
 *   (`GUEST_SESSION_MS`).
 * - **CSRF**, kept nowhere on the server: a signed double-submit token (csrf-csrf). The token is
 *   an HMAC, under a key derived from SESSION_SECRET, of a random value and the signed-in
 *   session's id; it goes in an HttpOnly cookie and in the form's `_csrf`, and a POST must bring
 *   both, equal, with an HMAC that matches. A visitor's token is bound instead to a random id in
 *   a cookie of its own, so viewing the sign-in page stores nothing, and a pair made in one
 *   browser (an attacker's, tossed into another) does not serve in another; once signed in, a
 *   token from before (or from another session) no longer matches. A visitor's form that the
 *   browser says comes from another site (`Sec-Fetch-Site`, else `Origin`) is refused with a
 *   page that says so; a client that says neither is judged by its token alone.
 * - **Written only when changed.** What the session held on arrival is noted, and a changed
 *   session is stored once, before the answer leaves (`SessionSavedInterceptor`, the page error
 *   filter): express-session sends a response's headers before its store has saved the session,
 *   and a browser follows a redirect as soon as it has them. An unchanged one costs no write but
 *   its expiry's, once every `SESSION_ACTIVITY_EVERY_MS` (see the store's `touch`).
 */
@Injectable()
export class WebSession implements NestMiddleware {
  private readonly session: RequestHandler;
  private readonly parseCookies = cookieParser();
  private readonly protect: RequestHandler;
  private readonly generateCsrf: (req: Request, res: Response) => string;
  private readonly cookies: WebCookies;
  /** Finds the session's cookie in a `Cookie` header. */
  private readonly sessionCookie: RegExp;
  /** APP_URL's origin, which a visitor's form may come from (besides the request's own). */
  private readonly origin: string;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly store: TypeormSessionStore,
    private readonly clock: Clock,
  ) {
    this.cookies = webCookiesFor(config);
    this.sessionCookie = new RegExp(`(?:^|;)\\s*${this.cookies.session.replace(/\./g, '\\.')}=`);
    this.origin = new URL(config.app.publicUrl).origin;
    const cookies = this.cookies;
    if (cookies.secure === true && config.web.trustProxy === false) {
      new Logger('Sessions').warn(
        'APP_URL is https but TRUST_PROXY is not set: Tessera serves plain http, so it must learn from the TLS proxy in front that a request came over https, or no session cookie (Secure, __Host-) is set and nobody can sign in',
      );
    }
    this.session = session({
      name: cookies.session,
      secret: config.web.sessionSecret,
      store,
      genid: (req) => store.generateId(req as Request),
      resave: false,
      saveUninitialized: false,
      // The cookie goes out again only with a change of the session (its activity, noted once
      // a minute, included), so the browser's expiry moves with the store's. A request under
      // way when its session was replaced (a sign-in) or ended does not put its cookie back.
      rolling: false,
      cookie: {
        httpOnly: true,
        sameSite: 'lax',
        secure: cookies.secure,
        path: '/',
        maxAge: config.web.sessionIdleMinutes * 60_000,
      },
    });
    const key = createHmac('sha256', config.web.sessionSecret).update('csrf').digest('hex');
    const { doubleCsrfProtection, generateCsrfToken } = doubleCsrf({
      getSecret: () => key,
      // Signed in: the session. A visitor: their random id (nothing, when they have none yet).
      getSessionIdentifier: (req) =>
        pageSession(req)?.userId !== undefined
          ? req.sessionID
          : `visitor:${(req.cookies as Record<string, string | undefined>)[cookies.visitor] ?? ''}`,
      cookieName: cookies.csrf,
      getCsrfTokenFromRequest: (req) =>
        (req.body as Record<string, unknown> | undefined)?._csrf as string | undefined,
      size: 32,
    });
    this.protect = doubleCsrfProtection;
    this.generateCsrf = (req, res) => {
      const cookieOptions = this.cookieOptions(req);
      if (pageSession(req)?.userId === undefined) this.ensureVisitorId(req, res);
      return generateCsrfToken(req, res, { cookieOptions });
    };
  }

  use(req: Request, res: Response, next: NextFunction): void {
    this.session(req, res, (error?: unknown) => {
      if (error) return next(error);
      // A visitor's session holds no more than a form's CSRF token or a message: it ends after
      // minutes, so anonymous page views cannot pile rows up for hours. Signing in starts a new
      // session with the full idle timeout.
      const session = pageSession(req);
      if (session && session.userId === undefined) {
        session.cookie.maxAge = GUEST_SESSION_MS;
      }
      // The browser named a session that is no more (it ended: idle, signed out elsewhere,
      // revoked): a page that needs signing in says so on the way to the sign-in page.
      if (!this.store.wasRead(req) && this.sessionCookie.test(req.headers.cookie ?? '')) {
        noteSessionEnded(req);
      }
      noteSessionLoaded(req);
      this.parseCookies(req, res, () => {
        const crossSite = this.visitorFormFromElsewhere(req)
          ? new CrossSiteRequestError(CROSS_SITE_FORM, 'visitor_form')
          : undefined;
        this.protect(req, res, (csrfError?: unknown) => {
          // Made only when a page renders a form (`{{csrfToken}}` calls it), once however many.
          let token: string | undefined;
          req.csrfToken = () => (token ??= this.generateCsrf(req, res));
          const refusal = crossSite ?? csrfError;
          this.pageLocals(req, res);
          // The page context (web/) reads who is signed in next, a refused form's included, so
          // its error page has their header.
          next(refusal);
        });
      });
    });
  }

  /** Secure as the session's cookie is: always with an https APP_URL, else over HTTPS. */
  private cookieOptions(req: Request) {
    const secure = this.cookies.secure === true || req.secure;
    return { httpOnly: true, sameSite: 'lax' as const, path: '/', secure };
  }

  /** Gives a visitor a random id to bind their CSRF tokens to, unless they have one. */
  private ensureVisitorId(req: Request, res: Response): void {
    const cookies = req.cookies as Record<string, string | undefined>;
    if (typeof cookies[this.cookies.visitor] === 'string' && cookies[this.cookies.visitor]) return;
    const id = randomBytes(24).toString('base64url');
    res.cookie(this.cookies.visitor, id, this.cookieOptions(req));
    // The token made next in this request is bound to it.
    cookies[this.cookies.visitor] = id;
  }

  /**
   * A form posted by a visitor (nobody signed in) that the browser says comes from another site:
   * `Sec-Fetch-Site` other than same-origin (or none), or else an `Origin` that is neither
   * APP_URL's nor the request's own. `Origin: null` says nothing (pages are sent with
   * `Referrer-Policy: no-referrer`, under which a browser writes null even for this site's own
   * forms), and neither header is what a client that is not a browser sends: the token decides.
   */
  private visitorFormFromElsewhere(req: Request): boolean {
    if (SAFE_METHODS.has(req.method) || pageSession(req)?.userId !== undefined) return false;
    const site = fetchSiteOf(req);
    if (site !== undefined) return site !== 'same-origin' && site !== 'none';
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || origin === 'null') return false;
    return origin !== this.origin && origin !== `${req.protocol}://${req.get('host') ?? ''}`;
  }

  /** What every page may show: a form's token, the time, the flash; and that it is never kept. */
  private pageLocals(req: Request, res: Response): void {
    // A function, so the token is made only when a page renders a form ({{csrfToken}} calls
    // it): redirects and error pages set no cookie.
    res.locals.csrfToken = () => req.csrfToken?.();
    // Times on the page are told relative to this ("3 minutes ago").
    res.locals.now = this.clock.nowMs();
    // Pages are per person: never kept, so Back cannot show a just-created token again.
    res.setHeader('Cache-Control', 'no-store');
    // A redirect's messages are shown by the page it lands on.
    if (req.method === 'GET') res.locals.flash = takeFlash(pageSession(req));
  }
}

/** Requests whose browser named a session that has ended. */
const endedSessions = new WeakSet<Request>();

/** The request's session has ended: found ended, or ended on arrival (too old, say). */
export function noteSessionEnded(req: Request): void {
  endedSessions.add(req);
}

/**
 * Whether the request came with the cookie of a session that has ended (or of none this site
 * made), or its session was ended on arrival: the browser was signed in, or on its way, and is
 * no longer.
 */
export function sessionEndedFor(req: Request): boolean {
  return endedSessions.has(req);
}

/** The person each loaded session was read with (null: nobody, or an account gone). */
const readWith = new WeakMap<object, SignedInPerson | null>();

/**
 * The person signed in to the request's session, as read with it; null when nobody is, their
 * account is gone, or the session is not the one the request loaded (regenerated since).
 */
export function signedInPersonOf(req: Request): SignedInPerson | null {
  return (req.session && readWith.get(req.session)) ?? null;
}

/**
 * What the page's session held when the request loaded it (its id and contents), to tell whether
 * the request changed it: a session is written only when it changed, once, before the answer
 * leaves.
 */
const loaded = new WeakMap<Request, { id: string; contents: string }>();

/**
 * The session's contents, its cookie aside, as express-session compares them: its own fields
 * copied without the cookie (a replacer function would be called for every value).
 */
function contentsOf(req: Request): string {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { cookie, ...contents } = req.session;
  return JSON.stringify(contents);
}

/** Called once the request's session is loaded (or made). */
export function noteSessionLoaded(req: Request): void {
  if (req.session) loaded.set(req, { id: req.session.id, contents: contentsOf(req) });
}

/**
 * Stores the session now if the request changed it (a redirect, or a page, must not reach the
 * browser before the flash or the new sign-in it carries is stored): express-session then finds
 * it saved and writes nothing more when the answer ends. A new session with nothing in it is
 * not stored; one read with a message that the page has now shown is.
 */
export function saveSessionIfChanged(req: Request): Promise<void> {
  const session = req.session;
  const before = loaded.get(req);
  if (!session) return Promise.resolve();
  const empty = !Object.keys(session).some((key) => key !== 'cookie');
  if (empty && session.id !== before?.id) return Promise.resolve();
  if (before?.id === session.id && before.contents === contentsOf(req)) return Promise.resolve();
  return new Promise((resolve, reject) =>
    session.save((error?: unknown) => {
      if (error) return reject(error instanceof Error ? error : new Error(String(error)));
      if (req.session) loaded.set(req, { id: req.session.id, contents: contentsOf(req) });
      resolve();
    }),
  );
}
