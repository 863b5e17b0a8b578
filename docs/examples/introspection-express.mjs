// A service of the team that protects its routes with Tessera (docs/introspection.md):
//   TESSERA_URL=https://tessera.example.com TESSERA_TOKEN=tsr_… PORT=8080 node introspection-express.mjs
// TESSERA_TOKEN holds tokens:introspect (a service account's, typically).
import express from 'express';

// The middleware: each request's bearer token checked by Tessera's introspection.
export function tessera({ url, token, abilities = '' }) {
  return async (req, res, next) => {
    const presented = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
    const check = await fetch(`${url}/api/v1/introspect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new URLSearchParams({ token: presented, required_abilities: abilities }),
    });
    if (!check.ok) throw new Error(`Tessera answered ${check.status}`);
    const answer = await check.json();
    if (answer.refusal) return res.status(403).json({ error: answer.refusal.code });
    if (!answer.active) return res.status(401).json({ error: 'invalid_token' });
    req.tessera = answer;
    next();
  };
}

const app = express();
const { TESSERA_URL: url, TESSERA_TOKEN: token, PORT = '8080' } = process.env;
app.post('/invoices', tessera({ url, token, abilities: 'invoices:write' }), (req, res) => {
  res.status(201).json({ created_by: req.tessera.user.name, team: req.tessera.team.slug });
});
const server = app.listen(Number(PORT), '127.0.0.1', () =>
  console.log(`listening on ${server.address().port}`),
);
