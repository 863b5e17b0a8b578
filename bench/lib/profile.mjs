// The share of busy CPU samples spent under Tessera's authentication, from a V8 CPU profile.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const AREAS = {
  authentication: [
    /\/dist\/src\/auth\//,
    /\/dist\/src\/tokens\//,
    /\/node_modules\/passport/,
    /\/node_modules\/@nestjs\/passport\//,
  ],
  'rate limiting': [/\/dist\/src\/rate-limit\//],
  // The request log's own hook calls next() synchronously, so everything after it would count
  // as its descendant: its price comes from the LOG_REQUESTS=false run instead. pino's frames
  // (serializing and writing lines) are leaves and count here.
  'writing log lines (pino)': [/\/node_modules\/pino/],
};
const IDLE = new Set(['(idle)', '(program)']);

/**
 * @param lastSeconds only the samples of the profile's last seconds count (the measured load,
 *   not start-up and warm-up)
 * @returns {Record<string, number>} fraction of busy samples with a frame of each area on the stack
 */
export function authShare(dir, lastSeconds) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return {};
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const from = profile.endTime - lastSeconds * 1e6;
  let at = profile.startTime;
  const times = profile.timeDeltas.map((d) => (at += d));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areasOf = new Map();
  const areas = (id) => {
    if (areasOf.has(id)) return areasOf.get(id);
    const node = byId.get(id);
    const own = Object.keys(AREAS).filter((a) =>
      AREAS[a].some((re) => re.test(node.callFrame.url)),
    );
    const up = parent.has(id) ? areas(parent.get(id)) : [];
    const result = [...new Set([...own, ...up])];
    areasOf.set(id, result);
    return result;
  };
  let busy = 0;
  const counts = Object.fromEntries(Object.keys(AREAS).map((a) => [a, 0]));
  for (const [i, id] of profile.samples.entries()) {
    if (times[i] < from || IDLE.has(byId.get(id).callFrame.functionName)) continue;
    busy++;
    for (const a of areas(id)) counts[a]++;
  }
  return Object.fromEntries(Object.entries(counts).map(([a, n]) => [a, busy ? n / busy : 0]));
}
