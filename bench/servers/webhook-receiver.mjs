// The webhook receiver of `npm run bench -- --events`: answers 200 at once and counts what it
// got, by endpoint (the path) and webhook-id, so that the bench can tell whether every event
// was delivered, and only once. The bench asks over the IPC channel:
//
//   'counts'  { received, unique, byPath: { '/hooks/1': n, … }, uniqueByPath: { … } }
import { createServer } from 'node:http';
import { port } from './common.mjs';

let received = 0;
const seen = new Set();
const byPath = {};
const uniqueByPath = {};

createServer((req, res) => {
  // The body is not needed: the delivery's identity is in its headers.
  req.resume();
  // Anything else is the bench asking whether the receiver is up.
  if (!req.url.startsWith('/hooks/')) return res.writeHead(404).end();
  received++;
  const key = `${req.url} ${req.headers['webhook-id']}`;
  if (!seen.has(key)) uniqueByPath[req.url] = (uniqueByPath[req.url] ?? 0) + 1;
  seen.add(key);
  byPath[req.url] = (byPath[req.url] ?? 0) + 1;
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
}).listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));

if (process.send) {
  process.on('message', (message) => {
    if (message === 'counts')
      process.send({ counts: { received, unique: seen.size, byPath, uniqueByPath } });
  });
  process.channel?.unref();
}
