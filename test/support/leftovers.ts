/**
 * What a spec opened (apps, SMTP servers, browsers) and has not closed yet. A spec closes what it
 * opens in its own afterAll; when that hook fails part-way, `closeLeftovers` (run after every spec
 * file, test/support/close-leftovers.ts) closes the rest, so nothing left listening keeps Jest
 * from exiting.
 */
const open = new Set<() => Promise<unknown>>();

/** Remembers how to close something just opened; the returned function forgets it again. */
export function track(close: () => Promise<unknown>): () => void {
  open.add(close);
  return () => open.delete(close);
}

export async function closeLeftovers(): Promise<void> {
  const closers = [...open];
  open.clear();
  const failures: unknown[] = [];
  // Apps before the servers they send mail to: most recently opened first.
  for (const close of closers.reverse()) {
    await close().catch((error: unknown) => failures.push(error));
  }
  if (failures.length > 0) throw new AggregateError(failures, 'Could not close what a spec left');
}
