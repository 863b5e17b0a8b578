import type { Server } from 'node:http';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';

/** A browser-like HTTP client: keeps cookies, and posts forms with the page's CSRF token. */
export class WebClient {
  readonly agent: TestAgent;

  constructor(server: Server) {
    this.agent = request.agent(server);
  }

  get(path: string) {
    return this.agent.get(path);
  }

  /** The CSRF token of a page's form, as the browser would submit it. */
  async csrfFrom(path: string): Promise<string> {
    const page = await this.agent.get(path);
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match) throw new Error(`no CSRF field on ${path} (status ${page.status})`);
    return match[1];
  }

  /** Submits a form found on `page` to `action`, as a browser would. */
  async submit(page: string, action: string, fields: Record<string, string | string[]> = {}) {
    const _csrf = await this.csrfFrom(page);
    return this.agent
      .post(action)
      .type('form')
      .send({ ...fields, _csrf });
  }

  /** Posts a form with a CSRF token fetched beforehand: for requests sent at the same moment. */
  post(action: string, _csrf: string, fields: Record<string, string> = {}) {
    return this.agent
      .post(action)
      .type('form')
      .send({ ...fields, _csrf });
  }

  async register(name: string, email: string, password = 'correct horse battery') {
    const res = await this.submit('/register', '/register', {
      name,
      email,
      password,
      password_confirmation: password,
    });
    if (res.status !== 303 || res.headers.location !== '/dashboard') {
      throw new Error(`registration failed: ${res.status} ${res.headers.location}`);
    }
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
