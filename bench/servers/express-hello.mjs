// The ceiling Express itself sets: hello world, no database. As people usually write it;
// with EXPRESS_PROTOTYPES=node, node:http creates requests and responses on Express's
// prototypes the way Tessera does (src/http/express-adapter.ts), for comparing the two.
import express from 'express';
import { createServer } from 'node:http';
import { port, timestamp } from './common.mjs';

const app = express();
app.get('/api/v1/user/profile', (req, res) => {
  res.json({
    success: true,
    data: { id: 1, name: 'Hello', email: 'hello@example.com' },
    version: 'v1',
    timestamp: timestamp(),
  });
});
const listening = () => console.log(`listening on ${port}`);
if (process.env.EXPRESS_PROTOTYPES === 'node') {
  const { prototypedClasses } = await import('../../dist/src/http/express-adapter.js');
  createServer(prototypedClasses(app), app).listen(port, '127.0.0.1', listening);
} else {
  app.listen(port, '127.0.0.1', listening);
}
