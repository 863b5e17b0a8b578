// People using the pages, as a browser would: sign up, then create tokens on the token page
// (cookies kept, each form sent with its page's CSRF token). The benchmark runs this against a
// server before loading its API, so its memory is measured as it is after real use: each
// sign-up hashes a password with argon2 (19 MiB outside V8's heap), each page is rendered.

const CSRF = /name="_csrf" value="([^"]+)"/;

class Browser {
  cookies = new Map();

  constructor(base) {
    this.base = base;
  }

  /** The Cookie header this browser sends. */
  get cookie() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(path, init = {}) {
    const cookie = this.cookie;
    const res = await fetch(this.base + path, {
      ...init,
      redirect: 'manual',
      headers: { ...init.headers, ...(cookie ? { cookie } : {}) },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }

  /**
   * Sends `fields` (pairs) with the CSRF token of the page `html`; expects `status` and, for a
   * redirect, `to` (a refused form is sent back to its page).
   */
  async submit(html, action, fields, status, to) {
    const csrf = CSRF.exec(html)?.[1];
    if (!csrf) throw new Error(`no CSRF token on the page before ${action}`);
    const res = await this.request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...fields, ['_csrf', csrf]]).toString(),
    });
    if (res.status !== status || (to && res.location !== to)) {
      throw new Error(`POST ${action}: ${res.status} ${res.location ?? ''} instead of ${status}`);
    }
    return res;
  }
}

/** The token form as a browser sends it: a name, the abilities ticked, the expiry chosen. */
function tokenForm(page, k) {
  const fields = [['name', `bench token ${k}`]];
  for (const [, ability] of page.matchAll(/name="abilities" value="([^"]+)"[^>]*checked/g)) {
    fields.push(['abilities', ability]);
  }
  // The expiry select's chosen option (the form has other selects, the team's first).
  const select = /name="expires_in_days"[\s\S]*?<\/select>/.exec(page)?.[0] ?? '';
  const expiry = /<option value="([^"]*)"\s*selected>/.exec(select);
  if (expiry) fields.push(['expires_in_days', expiry[1]]);
  return fields;
}

/**
 * `people` sign up and sign in (`parallel` at a time) and create `tokens` tokens between them, each through
 * the pages, each person's in turn and the people side by side. Returns each person's Cookie
 * header, signed in.
 */
export async function usePages(base, { people = 20, tokens = 1000, parallel = 4 } = {}) {
  const run = `${process.pid}-${Date.now()}`;
  const browsers = [];
  for (let i = 0; i < people; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, people - i) }, async (_, j) => {
      const browser = new Browser(base);
      const email = `bench-${run}-${i + j}@example.com`;
      const password = 'correct horse battery staple';
      await browser.submit(
        (await browser.request('/register')).text,
        '/register',
        Object.entries({
          name: `Bench person ${i + j}`,
          email,
          password,
          password_confirmation: password,
        }),
        303,
        '/register/check-email',
      );
      await browser.submit(
        (await browser.request('/login')).text,
        '/login',
        Object.entries({ email, password }),
        303,
        '/dashboard',
      );
      return browser;
    });
    browsers.push(...(await Promise.all(batch)));
  }
  await Promise.all(
    browsers.map(async (browser, i) => {
      let page = (await browser.request('/settings/api-tokens')).text;
      for (let k = i; k < tokens; k += browsers.length) {
        page = (await browser.submit(page, '/settings/api-tokens', tokenForm(page, k), 200)).text;
      }
    }),
  );
  return browsers.map((browser) => browser.cookie);
}
