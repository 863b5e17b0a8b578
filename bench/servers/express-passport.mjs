// The peer: a plain Express 5 + passport-http-bearer + mysql2 app, written the usual way.
import express from 'express';
import mysql from 'mysql2/promise';
import passport from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { errorBody, port, PROFILE_SQL, profileBody, sha256, verdict } from './common.mjs';

const pool = mysql.createPool({
  uri: process.env.DATABASE_URL,
  connectionLimit: 10,
  charset: 'utf8mb4_bin',
  timezone: 'Z',
});

passport.use(
  new BearerStrategy(async (token, done) => {
    try {
      const [rows] = await pool.execute(PROFILE_SQL, [sha256(token)]);
      const code = verdict(rows[0]);
      return code ? done(null, false, code) : done(null, rows[0]);
    } catch (error) {
      return done(error);
    }
  }),
);

const app = express();
app.use(passport.initialize());
app.get('/api/v1/user/profile', (req, res, next) =>
  passport.authenticate('bearer', { session: false }, (err, user, info) => {
    if (err) return next(err);
    if (!user)
      return res
        .status(401)
        .type('application/json')
        .send(errorBody(typeof info === 'string' ? info : 'invalid_token'));
    res.set('Cache-Control', 'no-store').type('application/json').send(profileBody(user));
  })(req, res, next),
);
app.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
