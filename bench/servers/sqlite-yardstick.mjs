// The SQLite yardstick: bare node:http + better-sqlite3, one prepared JOIN per request.
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import { errorBody, port, PROFILE_SQL, profileBody, sha256, verdict } from './common.mjs';

const db = new Database(process.env.DATABASE_URL.replace(/^sqlite:/, ''), { readonly: true });
const statement = db.prepare(PROFILE_SQL);

createServer((req, res) => {
  const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
  const row = match ? statement.get(sha256(match[1])) : undefined;
  const code = match ? verdict(row) : 'missing_token';
  res.writeHead(code ? 401 : 200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(code ? errorBody(code) : profileBody(row));
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
