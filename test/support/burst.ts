import type { Server } from 'node:http';

/**
 * Sends `count` requests at the same moment and returns their answers in the order asked.
 * `send(i, server)` builds the i-th; with several servers (instances that share their state)
 * the requests take turns among them. Every request is built and started before any answer is
 * read, so none waits for another: what a client firing them in parallel would do.
 */
export function burst<T>(
  count: number,
  servers: Server | Server[],
  send: (i: number, server: Server) => PromiseLike<T>,
): Promise<T[]> {
  const list = Array.isArray(servers) ? servers : [servers];
  return Promise.all(Array.from({ length: count }, (_, i) => send(i, list[i % list.length])));
}

/** How many answers fall under each name `classify` gives them, e.g. { checked: 5, refused: 95 }. */
export function tally<T>(answers: T[], classify: (answer: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const name = classify(answer);
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}
