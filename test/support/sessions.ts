import type { SessionData } from 'express-session';
import type { FindOptionsWhere } from 'typeorm';
import { Session } from '../../src/auth/session.entity.js';
import type { User } from '../../src/users/user.entity.js';
import type { TestApp } from './test-app.js';

/**
 * Changes what the stored sessions that match `where` hold, as time passing would: `edit`
 * changes each one's data in place, and `columns` are written along with it. Fails when no
 * session matches.
 */
export async function editSessions(
  t: Pick<TestApp, 'dataSource'>,
  where: FindOptionsWhere<Session>,
  edit: (data: SessionData) => void,
  columns: Partial<Pick<Session, 'expiresAt' | 'lastActiveAt'>> = {},
): Promise<void> {
  const sessions = t.dataSource.getRepository(Session);
  const rows = await sessions.findBy(where);
  if (rows.length === 0) throw new Error(`no session matches ${JSON.stringify(where)}`);
  for (const row of rows) {
    const data = JSON.parse(row.data) as SessionData;
    edit(data);
    await sessions.update({ id: row.id }, { ...columns, data: JSON.stringify(data) });
  }
}

/** Makes the person's password confirmation older than sudo mode's 15 minutes, in each session. */
export function forgetPasswordConfirmation(
  t: Pick<TestApp, 'dataSource'>,
  person: { user: Pick<User, 'id'> },
): Promise<void> {
  return editSessions(t, { userId: person.user.id }, (data) => {
    data.passwordConfirmedAt = Date.now() - 16 * 60_000;
  });
}
