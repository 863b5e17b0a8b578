// The yardstick: bare node:http + mysql2, one prepared JOIN per request, the same JSON as Tessera.
import { createServer } from 'node:http';
import mysql from 'mysql2/promise';
import { errorBody, port, PROFILE_SQL, profileBody, sha256, verdict } from './common.mjs';

const pool = mysql.createPool({
  uri: process.env.DATABASE_URL,
  connectionLimit: 10,
  charset: 'utf8mb4_bin',
  timezone: 'Z',
});
// On a cluster node, the yardstick with the causal-read setting Tessera gives its connections
// (SESSION_SETTING): what the setting costs, measured without Tessera around it.
if (process.env.SESSION_SETTING) {
  pool.pool.on('connection', (connection) =>
    connection.query(process.env.SESSION_SETTING, () => {}),
  );
}

createServer(async (req, res) => {
  const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
  let status = 401;
  let body;
  if (match) {
    const [rows] = await pool.execute(PROFILE_SQL, [sha256(match[1])]);
    const code = verdict(rows[0]);
    if (!code) {
      status = 200;
      body = profileBody(rows[0]);
    } else {
      status = code === 'insufficient_scope' ? 403 : 401;
      body = errorBody(code);
    }
  } else {
    body = errorBody('missing_token');
  }
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(body);
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
