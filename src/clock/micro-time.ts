import { performance } from 'node:perf_hooks';

/**
 * The wall-clock time at which performance.now() was zero, accurate to microseconds: taken at
 * the instant Date.now() ticks over to a new millisecond (a wait of at most 1 ms).
 */
function anchor(): number {
  const start = Date.now();
  let wall = Date.now();
  while (wall === start) wall = Date.now();
  return wall - performance.now();
}

let origin = anchor();

/**
 * The machine's UTC time as ISO 8601 with six real fractional digits (SystemClock's
 * `isoMicros`). JavaScript dates stop at milliseconds, so the microseconds come from the
 * monotonic high-resolution clock, anchored to the wall clock; when the wall clock is stepped
 * (NTP, a suspended machine) it is re-anchored.
 */
export function isoMicrosOfMachine(): string {
  let nowMs = origin + performance.now();
  const wallMs = Date.now();
  if (nowMs < wallMs - 1 || nowMs > wallMs + 2) {
    origin = anchor();
    nowMs = origin + performance.now();
  }
  const micros = Math.floor(nowMs * 1000);
  const ms = Math.floor(micros / 1000);
  // Several answers share a millisecond under load: its text is made once.
  if (ms !== stampedMs) {
    stampedMs = ms;
    stamp = new Date(ms).toISOString().slice(0, -1);
  }
  return `${stamp}${FRACTIONS[micros % 1000]}Z`;
}

let stampedMs = -1;
let stamp = '';
const FRACTIONS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
