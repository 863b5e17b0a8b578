// The ceiling Express itself sets: hello world, no database.
import express from 'express';
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
app.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
