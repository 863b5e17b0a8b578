import type { Server } from 'node:http';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { csrfTokenIn, newTokenIn, resumedFormIn, visibleText } from './html.js';
import { TestSmtpServer } from './smtp-server.js';

/** A browser-like HTTP client: keeps cookies, and posts forms with the page's CSRF token. */
export class WebClient {
  readonly agent: TestAgent;

  /** `mail`: where the app's mail arrives, for following the links it sends. */
  constructor(
    server: Server,
    private readonly mail?: TestSmtpServer,
  ) {
    this.agent = request.agent(server);
    // As a browser says of a request that one of the site's own pages makes.
    this.agent.set('Sec-Fetch-Site', 'same-origin');
  }

  /**
   * The same browser talking to another instance of the app: the cookies go along (a cookie names
   * its host, not its port), as they would behind one load balancer.
   */
  on(server: Server): WebClient {
    const other = new WebClient(server, this.mail);
    (other.agent as unknown as { jar: unknown }).jar = (
      this.agent as unknown as { jar: unknown }
    ).jar;
    return other;
  }

  /** The same browser on each of the servers, in their order (see `on`). */
  onEach(servers: Server[]): WebClient[] {
    return servers.map((server) => this.on(server));
  }

  get(path: string) {
    return this.agent.get(path);
  }

  /** The text a person reads on the page at `path` (see `visibleText`). */
  async textOf(path: string): Promise<string> {
    return visibleText((await this.agent.get(path)).text);
  }

  /** The CSRF token of a page's form, as the browser would submit it. */
  async csrfFrom(path: string): Promise<string> {
    const page = await this.agent.get(path);
    return csrfTokenIn(page.text, `${path} (status ${page.status})`);
  }

  /** Submits a form found on `page` to `action`, as a browser would. */
  async submit(page: string, action: string, fields: Record<string, string | string[]> = {}) {
    const _csrf = await this.csrfFrom(page);
    return this.agent
      .post(action)
      .type('form')
      .send({ ...fields, _csrf });
  }

  /**
   * After the password is confirmed (sudo mode): the form that waited for it, sent as the
   * continue page's script sends it.
   */
  async resume() {
    const page = await this.agent.get('/confirm-password/continue');
    const { action, fields } = resumedFormIn(page.text);
    const body = fields.map(
      ([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`,
    );
    return this.agent.post(action).type('form').send(body.join('&'));
  }

  /**
   * Creates an API token from the tokens page, as a person would. Returns the page's answer, the
   * value it shows once and the token's id.
   */
  async createTokenOnPage(fields: Record<string, string | string[]>) {
    const page = await this.submit('/settings/api-tokens', '/settings/api-tokens', fields);
    return { page, ...newTokenIn(page.text) };
  }

  /** Posts a form with a CSRF token fetched beforehand: for requests sent at the same moment. */
  post(action: string, _csrf: string, fields: Record<string, string> = {}) {
    return this.agent
      .post(action)
      .type('form')
      .send({ ...fields, _csrf });
  }

  /**
   * Signs up as a person would: the form, then signing in, then (with a mailbox) confirming the
   * address from the link in the mail. Returns the sign-in's answer, which sets the session
   * cookie.
   */
  async register(
    name: string,
    email: string,
    password = 'correct horse battery',
    options: { confirm?: boolean } = {},
  ) {
    const res = await this.submit('/register', '/register', {
      name,
      email,
      password,
      password_confirmation: password,
    });
    if (res.status !== 303 || res.headers.location !== '/register/check-email') {
      throw new Error(`registration failed: ${res.status} ${res.headers.location}`);
    }
    const signedIn = await this.login(email, password);
    if (signedIn.status !== 303 || signedIn.headers.location !== '/dashboard') {
      throw new Error(`sign-in after registration failed: ${signedIn.status}`);
    }
    if (this.mail && options.confirm !== false) await this.confirmEmail(email);
    return signedIn;
  }

  /**
   * Opens the confirmation link mailed to `email` and confirms with its button, signed in as
   * the account it was sent for (opening the link alone changes nothing).
   */
  async confirmEmail(email: string) {
    if (!this.mail) throw new Error('this client has no mailbox to read');
    const mail = await this.mail.waitFor({ to: email, subject: 'Confirm your email address' });
    const link = TestSmtpServer.linkPath(mail, '/verify-email/');
    const page = await this.agent.get(link);
    if (page.status !== 200 || !page.text.includes(`action="${link}"`)) {
      throw new Error(`no confirmation form on the link's page: ${page.status}`);
    }
    const res = await this.submit(link, link);
    if (res.status !== 303) throw new Error(`confirmation failed: ${res.status}`);
    return res;
  }

  async login(email: string, password = 'correct horse battery') {
    return this.submit('/login', '/login', { email, password });
  }

  /** The session cookie the server set, as name=value. */
  sessionCookie(res: request.Response): string | undefined {
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    return cookies.find((c) => c.startsWith('tessera.sid='))?.split(';')[0];
  }
}
