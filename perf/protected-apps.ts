/**
 * Child process of `perf/protected-route.ts`: a trivial Express route (`GET /page` answering
 * "ok") behind express-session (memory store) and `passport.session()`, with
 * `requireSignIn()` in front of it when BENCH_GUARD=1. `GET /__signin` makes the session signed in
 * as `ndIdRouter()` would (Passport's user and the sign-in record); `GET /__cpu` answers this
 * process's CPU time in µs. Prints one JSON line with the port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { createSessionPolicy } from '../src/flow/session-policy.js';
import { recordSession } from '../src/flow/session.js';
import { requireSignIn } from '../src/passport/require-sign-in.js';

const guarded = process.env.BENCH_GUARD === '1';
const sessions = createSessionPolicy();
const authenticator = new passport.Passport();
authenticator.serializeUser((user, done) => done(null, user));
authenticator.deserializeUser((user: Express.User, done) => done(null, user));

const app = express();
app.get('/__cpu', (_req, res) => {
  const { user, system } = process.cpuUsage();
  res.type('json').send(JSON.stringify({ us: user + system }));
});
app.use(session({ secret: 'bench-session-secret', resave: false, saveUninitialized: false }));
app.use(authenticator.session());
app.get('/__signin', (req, res, next) => {
  const user = { sub: 'bench-sub-0123456789', data: { 'profile.name': 'Bench Person' } };
  req.logIn(user, (err) => {
    if (err) return next(err);
    sessions.start(recordSession(req.session as unknown as Record<string, unknown>), {
      sub: user.sub,
      authTime: Date.now(),
    });
    res.send('signed in');
  });
});
if (guarded) app.get('/page', requireSignIn({ sessions }), (_req, res) => void res.send('ok'));
else app.get('/page', (_req, res) => void res.send('ok'));

const server = createServer(app);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n');
});
