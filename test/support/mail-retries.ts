import type { ManualClock } from '../../src/clock/clock.js';
import { OutboxMessage } from '../../src/mail/outbox-message.entity.js';
import type { TestApp } from './test-app.js';
import { waitFor } from './wait-for.js';

/**
 * A message that waits for its retry while something happens: `ask` runs while the app's mail
 * server is down, so the message it asks for to `to` fails its first try; then `meanwhile` runs;
 * then the server comes back and the clock moves to the retry. Resolves with the message once it
 * is finished (sent, or dropped as nothing to send).
 */
export async function retriedAfter(
  t: Pick<TestApp, 'dataSource' | 'mail'>,
  clock: ManualClock,
  to: string,
  ask: () => Promise<unknown>,
  meanwhile: () => Promise<unknown>,
): Promise<OutboxMessage> {
  const outbox = t.dataSource.getRepository(OutboxMessage);
  await t.mail.stop();
  let waiting: OutboxMessage | undefined;
  try {
    await ask();
    // Read between two tries: a retry that holds the message is not the state asked about.
    waiting = await waitFor(async () => {
      const row = await outbox.findOneBy({ recipient: to, status: 'pending' });
      return row?.lastError != null && row.claimedBy === null ? row : undefined;
    });
    await meanwhile();
  } finally {
    await t.mail.listen();
  }
  clock.set(Math.max(clock.nowMs(), waiting.nextAttemptAt.getTime()));
  return waitFor(async () => {
    const row = await outbox.findOneByOrFail({ id: waiting!.id });
    return row.status === 'pending' ? undefined : row;
  });
}
