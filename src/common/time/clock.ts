import { performance } from 'node:perf_hooks';

let origin = performance.timeOrigin;

/**
 * The current UTC time as ISO 8601 with six real fractional digits. JavaScript dates stop at
 * milliseconds, so the microseconds come from the monotonic high-resolution clock, anchored to
 * the wall clock and re-anchored whenever the two drift apart by a millisecond or more (NTP
 * adjustments, a suspended machine).
 */
export function isoTimestampMicros(): string {
  let micros = origin * 1000 + performance.now() * 1000;
  const wallMs = Date.now();
  if (Math.abs(micros / 1000 - wallMs) >= 1) {
    origin = wallMs - performance.now();
    micros = origin * 1000 + performance.now() * 1000;
  }
  const whole = Math.floor(micros);
  const ms = Math.floor(whole / 1000);
  const fraction = String(whole % 1000).padStart(3, '0');
  return `${new Date(ms).toISOString().slice(0, -1)}${fraction}Z`;
}
