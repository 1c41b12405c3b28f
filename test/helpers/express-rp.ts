/**
 * An Express app with express-session and Passport whose strategy and router are installed once
 * the provider is up (its callback URL is needed to register it), for logins against providers
 * started by the tests. Not a test file itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import { ndIdRouter } from '../../src/passport/router.js';
import type { NdIdStrategy } from '../../src/passport/strategy.js';
import { Browser } from './harness.js';

export interface ExpressApp {
  baseUrl: string;
  callbackURL: string;
  browser(): Browser;
  install(strategy: NdIdStrategy, options?: { publishKeys?: boolean }): void;
  close(): Promise<void>;
}

/** An Express app with express-session and Passport; the strategy and router are installed once the provider is up. */
export async function startExpressApp(): Promise<ExpressApp> {
  const app = express();
  let routes: RequestHandler | undefined;
  const authenticator = new passport.Passport();
  app.use(session({ secret: 'interop-session-secret', resave: false, saveUninitialized: false }));
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(authenticator.session());
  app.use('/auth', (req, res, next) => (routes === undefined ? next() : routes(req, res, next)));
  app.get('/me', (req, res) => {
    res.status(req.user ? 200 : 401).json({ user: req.user ?? null });
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    callbackURL: `${baseUrl}/auth/callback`,
    browser: () => new Browser(baseUrl),
    install(strategy, options = {}) {
      authenticator.use(strategy);
      routes = ndIdRouter({
        passport: authenticator,
        ...(options.publishKeys === true ? { publishKeys: strategy } : {}),
        successRedirect: '/me',
        renderFailure: (failure, _req, res) => {
          res.status(failure.status).json({ code: failure.code, diagnosis: failure.diagnosis?.code ?? null });
        },
      });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
