import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ManualClock } from '../src/clock/clock.js';
import { TokenExpiryReminders } from '../src/tokens/token-expiry-reminders.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Expiry reminders by the token's lifetime, with the app's clock moved by the spec: a reminder
 * comes only in the second half of a token's life, so none repeats a lifetime just chosen.
 */
describe('token expiry reminders', () => {
  const clock = new ManualClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
  });
  afterAll(async () => {
    await t.close();
  });
  // A few seconds ahead of the database's clock, which stamps creation: as an app server whose
  // clock runs ahead would be. The stamps then say a 1-day token lives a little over a day.
  beforeEach(() => clock.set(Date.now() + 5_000));

  const run = () => t.app.get(TokenExpiryReminders).run();
  const person = () => createUser(t.app, { email: uniqueEmail('reminded') });
  /** Sets the clock to `before` the token's expiry, and runs the reminders. */
  const runAt = async (expiresAt: Date, before: number) => {
    clock.set(expiresAt.getTime() - before);
    return run();
  };

  it('should send a 1-day token no reminder, not a minute after creation nor on its last hour', async () => {
    const user = await person();
    const { token } = await createToken(t.app, user, { name: 'one day', expiresInDays: 1 });
    clock.advance(60_000);
    expect(await run()).toEqual({ reminded: 0, expired: 0 });
    expect(await runAt(token.expiresAt!, HOUR_MS)).toEqual({ reminded: 0, expired: 0 });
    expect(await runAt(token.expiresAt!, -60_000)).toEqual({ reminded: 0, expired: 1 });
    const [{ n }] = await t.dataSource.query(
      "SELECT COUNT(*) AS n FROM mail_outbox WHERE kind = 'token-expiry' AND recipient = ?",
      [user.email],
    );
    expect(Number(n)).toBe(0);
  });

  it('should remind a 2-day token on its last day only, by mail, once', async () => {
    const user = await person();
    const { token } = await createToken(t.app, user, { name: 'two days', expiresInDays: 2 });
    clock.advance(60_000);
    expect((await run()).reminded).toBe(0);
    expect((await runAt(token.expiresAt!, 23 * HOUR_MS)).reminded).toBe(1);
    expect((await run()).reminded).toBe(0);
    const mail = await t.mail.waitFor({ to: user.email, subject: /expires/ });
    expect(mail.subject).toBe('Your API token "two days" expires within a day');
  });

  it('should remind a 10-day token on its last day but not a week ahead, and a 30-day token both', async () => {
    const user = await person();
    const ten = await createToken(t.app, user, { name: 'ten days', expiresInDays: 10 });
    const thirty = await createToken(t.app, user, { name: 'thirty days', expiresInDays: 30 });
    clock.advance(60_000);
    expect((await run()).reminded).toBe(0);
    // Six days before the ten-day token ends: its week reminder would fall in its first half.
    expect((await runAt(ten.token.expiresAt!, 6 * DAY_MS)).reminded).toBe(0);
    // Each mail is made when it is sent, by the clock of then: it is awaited before the clock moves.
    expect((await runAt(ten.token.expiresAt!, 20 * HOUR_MS)).reminded).toBe(1);
    await t.mail.waitFor({
      to: user.email,
      subject: 'Your API token "ten days" expires within a day',
    });
    expect((await runAt(thirty.token.expiresAt!, 6 * DAY_MS)).reminded).toBe(1);
    await t.mail.waitFor({
      to: user.email,
      subject: 'Your API token "thirty days" expires in 6 days',
    });
    expect((await runAt(thirty.token.expiresAt!, 20 * HOUR_MS)).reminded).toBe(1);
    await t.mail.waitFor({
      to: user.email,
      subject: 'Your API token "thirty days" expires within a day',
    });
    expect(t.mail.find({ to: user.email, subject: /expires/ })).toHaveLength(3);
  });
});
