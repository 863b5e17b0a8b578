import { describe, expect, it } from '@jest/globals';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { nextBatch, streamBody } from './audit-stream-batches.js';
import { AUTHORIZATION_MAX, acceptableAuthorization } from './audit-stream-authorization.js';

const entry = (id: number, over: Partial<AuditEvent> = {}): AuditEvent => ({
  id,
  occurredAt: new Date(Date.UTC(2026, 10, 20, 9, 0, id)),
  event: 'team.role_changed',
  actorUserId: 1,
  actorKind: 'user',
  userId: 7,
  teamId: 4,
  tokenId: null,
  sessionHandle: 'handle',
  targetType: 'user',
  targetId: 7,
  detail: JSON.stringify({ role: 'admin', previous_role: 'member' }),
  ip: '203.0.113.7',
  userAgent: 'curl/8',
  ...over,
});

describe('streamBody', () => {
  it('should write each entry as audit:export does, one JSON object a line, in the order given', () => {
    const body = streamBody([entry(3), entry(1, { detail: null, targetType: null })]);
    expect(body.endsWith('\n')).toBe(true);
    const lines = body.split('\n').slice(0, -1);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        id: 3,
        occurred_at: '2026-11-20T09:00:03.000Z',
        event: 'team.role_changed',
        actor: { kind: 'user', user_id: 1 },
        user_id: 7,
        team_id: 4,
        token_id: null,
        session: 'handle',
        target: { type: 'user', id: 7 },
        detail: { role: 'admin', previous_role: 'member' },
        ip: '203.0.113.7',
        user_agent: 'curl/8',
      },
      expect.objectContaining({ id: 1, target: null, detail: null }),
    ]);
  });

  it('should keep a line break inside a value within its line when an entry holds one', () => {
    const body = streamBody([entry(1, { userAgent: 'two\nlines' }), entry(2)]);
    expect(body.split('\n')).toHaveLength(3);
  });
});

describe('nextBatch', () => {
  const waiting = (ids: number[], pruned: number[] = []) =>
    ids.map((id) => ({ entryId: id * 10, event: pruned.includes(id) ? undefined : entry(id) }));
  const lineBytes = Buffer.byteLength(streamBody([entry(1)]));

  it('should take the oldest entries whose lines fit, and leave the rest waiting', () => {
    const { taken, events } = nextBatch(waiting([1, 2, 3, 4]), lineBytes * 2 + 1);
    expect(taken).toEqual([10, 20]);
    expect(events.map((e) => e.id)).toEqual([1, 2]);
  });

  it('should take one entry even when it alone is larger than the limit', () => {
    expect(nextBatch(waiting([1, 2]), 10).taken).toEqual([10]);
  });

  it('should take the entries pruned from the log among those it sends, and send them not', () => {
    const { taken, events } = nextBatch(waiting([1, 2, 3], [2]), lineBytes * 2 + 1);
    expect(taken).toEqual([10, 20, 30]);
    expect(events.map((e) => e.id)).toEqual([1, 3]);
    expect(nextBatch(waiting([1, 2], [1, 2]))).toEqual({ taken: [10, 20], events: [] });
  });
});

describe('acceptableAuthorization', () => {
  it('should keep a header value, trimmed, and nothing when none is given', () => {
    expect(acceptableAuthorization('  Splunk 1234-abcd ')).toBe('Splunk 1234-abcd');
    expect(acceptableAuthorization('')).toBeNull();
    expect(acceptableAuthorization(undefined)).toBeNull();
  });

  it('should refuse a value that could add a header, is not printable ASCII, or is too long', () => {
    for (const bad of [
      'Splunk a\r\nX-Other: 1',
      'Splunk t\u00f8ken',
      `Bearer ${'a'.repeat(AUTHORIZATION_MAX)}`,
    ]) {
      expect(() => acceptableAuthorization(bad)).toThrow(ValidationError);
    }
  });
});
