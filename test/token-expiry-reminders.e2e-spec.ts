import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ManualClock } from '../src/clock/clock.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { TokenExpiryReminders, type ExpiryRun } from '../src/tokens/token-expiry-reminders.js';
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

  /**
   * What the reminders did since the clock last moved: moving it runs the scheduler's round
   * when one falls due, as it would in production, and the spec runs one more; their counts
   * add up (a reminder is claimed once, whichever round finds it).
   */
  let done: ExpiryRun = { reminded: 0, expired: 0 };
  beforeAll(() => {
    const reminders = t.app.get(TokenExpiryReminders);
    const runOnce = reminders.run.bind(reminders);
    reminders.run = async () => {
      const result = await runOnce();
      done = { reminded: done.reminded + result.reminded, expired: done.expired + result.expired };
      return result;
    };
  });
  /** Moves the clock with `move`, runs the reminders, and says what was done since the move. */
  const after = async (move: () => void = () => undefined): Promise<ExpiryRun> => {
    done = { reminded: 0, expired: 0 };
    move();
    await t.app.get(TokenExpiryReminders).run();
    await t.app.get(Scheduler).drain();
    return done;
  };
  const run = () => after();
  const person = () => createUser(t.app, { email: uniqueEmail('reminded') });
  /** Sets the clock to `before` the token's expiry, and runs the reminders. */
  const runAt = (expiresAt: Date, before: number) =>
    after(() => clock.set(expiresAt.getTime() - before));

  it('should send a 1-day token no reminder, not a minute after creation nor on its last hour', async () => {
    const user = await person();
    const { token } = await createToken(t.app, user, { name: 'one day', expiresInDays: 1 });
    expect(await after(() => clock.advance(60_000))).toEqual({ reminded: 0, expired: 0 });
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
    expect((await after(() => clock.advance(60_000))).reminded).toBe(0);
    expect((await runAt(token.expiresAt!, 23 * HOUR_MS)).reminded).toBe(1);
    expect((await run()).reminded).toBe(0);
    const mail = await t.mail.waitFor({ to: user.email, subject: /expires/ });
    expect(mail.subject).toBe('Your API token "two days" expires within a day');
  });

  it('should remind a 10-day token on its last day but not a week ahead, and a 30-day token both', async () => {
    const user = await person();
    const ten = await createToken(t.app, user, { name: 'ten days', expiresInDays: 10 });
    const thirty = await createToken(t.app, user, { name: 'thirty days', expiresInDays: 30 });
    expect((await after(() => clock.advance(60_000))).reminded).toBe(0);
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
