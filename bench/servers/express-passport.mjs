// The peer: a plain Express 5 + passport-http-bearer app, written the usual way, over mysql2's
// promise pool (or better-sqlite3 for a `sqlite:` DATABASE_URL).
import express from 'express';
import passport from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { errorBody, port, profileBody, profileLookup, sha256, verdict } from './common.mjs';

const lookup = await profileLookup();

passport.use(
  new BearerStrategy(async (token, done) => {
    try {
      const row = await lookup(sha256(token));
      const code = verdict(row);
      return code ? done(null, false, code) : done(null, row);
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
