/**
 * A plain Express app with express-session and Passport, listening on loopback: `ndIdRouter` at
 * `/auth` once a strategy is installed (failures answered as JSON `{ code }`), and `GET /me`
 * answering `{ user: req.user }`. For tests whose provider needs the app's callback URL before
 * the strategy can be built. Not a test file itself.
 */
import { createServer, type Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import { ndIdRouter, type NdIdRouterOptions } from '../../src/passport/router.js';
import type { NdIdStrategy } from '../../src/passport/strategy.js';
import { closeServer, listenOnLoopback } from './harness.js';

/** A running app. */
export interface PassportApp {
  baseUrl: string;
  /** `${baseUrl}/auth/callback`. */
  callbackURL: string;
  /** Installs the strategy and the router (`successRedirect: '/me'` unless `router` says otherwise). */
  install(strategy: NdIdStrategy, router?: Partial<NdIdRouterOptions>): void;
  close(): Promise<void>;
}

export async function startPassportApp(): Promise<PassportApp> {
  const app = express();
  let routes: RequestHandler | undefined;
  app.use(session({ secret: 'passport-app-session-secret', resave: false, saveUninitialized: false }));
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(authenticator.session());
  app.use('/auth', (req, res, next) => (routes === undefined ? next() : routes(req, res, next)));
  app.get('/me', (req, res) => res.status(req.user ? 200 : 401).json({ user: req.user ?? null }));
  const server: Server = createServer(app);
  const baseUrl = await listenOnLoopback(server);
  return {
    baseUrl,
    callbackURL: `${baseUrl}/auth/callback`,
    install(strategy, router = {}) {
      authenticator.use(strategy);
      routes = ndIdRouter({
        passport: authenticator,
        successRedirect: '/me',
        renderFailure: (failure, _req, res) => {
          res.status(failure.status).json({ code: failure.code });
        },
        ...router,
      } as NdIdRouterOptions);
    },
    close: () => closeServer(server),
  };
}
