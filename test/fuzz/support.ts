/**
 * Shared set-up of the fuzz suites: a relying party (express-session + NdIdStrategy +
 * ndIdRouter) on loopback, pointed at the real provider (autoApprove) or at the stub provider,
 * and the checks every fuzz case must pass: no stack trace, no secret, no token, no key and no
 * attribute value in what the user or the app sees.
 *
 * Runs are seeded: FUZZ_SEED (default below) fixes the cases; fast-check prints the seed and
 * the path of any counterexample, and FUZZ_RUNS scales every suite's case count.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import { expect } from 'vitest';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import type { StubProvider } from '../helpers/stub-provider.js';

/** Default seed of every fuzz suite; set FUZZ_SEED to explore other cases. */
export const DEFAULT_SEED = 20_240_601;

/** fast-check options: a fixed seed (or FUZZ_SEED) and `runs` scaled by FUZZ_RUNS (a factor, default 1). */
export function fuzzOptions(runs: number): { numRuns: number; seed: number } {
  const seed = process.env.FUZZ_SEED === undefined ? DEFAULT_SEED : Number(process.env.FUZZ_SEED);
  const factor = process.env.FUZZ_RUNS === undefined ? 1 : Number(process.env.FUZZ_RUNS);
  return { numRuns: Math.max(1, Math.round(runs * (Number.isFinite(factor) && factor > 0 ? factor : 1))), seed };
}

/** Generous bound that proves a case did not hang (the client's own HTTP timeout is lower). */
export const CASE_TIME_LIMIT_MS = 5000;
/** HTTP timeout given to the clients under test. */
export const CLIENT_TIMEOUT_MS = 2000;

export const CLIENT_ID = 'fuzz-rp';
export const CLIENT_SECRET = 'fuzz-client-secret-never-shown-4d1f';

/** A relying party under fuzz. */
export interface FuzzRp {
  baseUrl: string;
  store: session.MemoryStore;
  /** A new browser (a cookie jar). */
  browser(): ReturnType<typeof request.agent>;
  /** Sessions in the store that carry a signed-in user. */
  signedInSessions(): Promise<number>;
  /** Every log line the strategy wrote, as text (object and message), in order. */
  logLines: string[];
  close(): Promise<void>;
}

/** Where the RP's client goes: the real provider it registers with, or a stub. */
export type FuzzTarget = { kind: 'provider' } | { kind: 'stub'; stub: StubProvider };

/**
 * Starts an RP. Its HTTP server accepts request heads up to 1 MiB, so 100 KB query values reach
 * the strategy instead of being refused by Node's default 16 KB limit.
 */
export async function startFuzzRp(target: FuzzTarget): Promise<FuzzRp & { provider?: StartedProvider }> {
  const store = new session.MemoryStore();
  const logLines: string[] = [];
  const capture = (...args: unknown[]): void => {
    logLines.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  };
  const logger = { debug: capture, info: capture, warn: capture, error: capture };
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  const app = express();
  app.use(session({ secret: 'fuzz-session-secret', resave: false, saveUninitialized: false, store }));
  app.use(authenticator.initialize());
  app.use(authenticator.session());
  app.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/signed-in' }));
  app.get('/me', (req, res) => {
    res.status(req.user ? 200 : 401).json({ signedIn: req.user !== undefined });
  });
  const server: Server = createServer({ maxHeaderSize: 1024 * 1024 }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const callbackURL = `${baseUrl}/auth/callback`;

  let provider: StartedProvider | undefined;
  if (target.kind === 'provider') {
    provider = await startProvider({
      clients: [
        {
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          redirectUris: [callbackURL],
          publicKey: testKeyPair('rp').publicKeyPem,
        },
      ],
      autoApprove: true,
    });
    authenticator.use(
      new NdIdStrategy({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: testKeyPair('rp').privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL,
        timeout: CLIENT_TIMEOUT_MS,
        scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
        logger,
      }),
    );
  } else {
    authenticator.use(
      new NdIdStrategy({
        clientId: target.stub.clientId,
        clientSecret: CLIENT_SECRET,
        privateKey: target.stub.rpPrivateKeyPem,
        hostname: target.stub.origin,
        callbackURL,
        timeout: CLIENT_TIMEOUT_MS,
        logger,
      }),
    );
  }

  return {
    baseUrl,
    store,
    ...(provider === undefined ? {} : { provider }),
    logLines,
    browser: () => request.agent(baseUrl),
    signedInSessions: () =>
      new Promise((resolve, reject) => {
        store.all((err, all) => {
          if (err) return reject(err instanceof Error ? err : new Error('store failed'));
          const sessions = Object.values(all ?? {}) as { passport?: { user?: unknown } }[];
          resolve(sessions.filter((s) => s.passport?.user !== undefined).length);
        });
      }),
    close: async () => {
      await provider?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Values no output may contain: secrets, key material and every persona's attributes. */
export function baseForbidden(): string[] {
  const rp = testKeyPair('rp');
  const pemBody = (pem: string): string[] =>
    pem
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('-----'))
      .slice(1, 4); // a few full lines from inside the key: enough to spot any part of it
  return [
    CLIENT_SECRET,
    'PRIVATE KEY',
    ...pemBody(rp.privateKeyPem),
    ...DEFAULT_PERSONAS.flatMap((p) => [p['profile.name'], p['profile.nric_number']]),
  ];
}

/** Long-enough pieces of a token (its dot-separated segments) to look for in output. */
export function tokenPieces(token: string): string[] {
  return token.split('.').filter((part) => part.length >= 16);
}

/** Asserts `text` has no stack frame and none of `forbidden`. */
export function expectNoLeak(text: string, forbidden: readonly string[], where: string): void {
  expect(text, `${where}: stack frame`).not.toMatch(/\bat .+:\d+:\d+/);
  expect(text, `${where}: stack frame`).not.toMatch(/node_modules|\/src\/|\.ts:\d+/);
  for (const value of forbidden) {
    if (value !== '' && text.includes(value)) {
      // Say which kind of value leaked, never the value itself.
      expect.fail(`${where}: output contains a forbidden value (${forbidden.indexOf(value)} of the forbidden list)`);
    }
  }
}

/**
 * Records unhandled promise rejections while a suite runs; `check()` asserts there were none
 * (a rejection nobody awaited is a bug even when every case's own assertion passed).
 */
export function guardUnhandledRejections(): { check(): void; stop(): void } {
  const seen: string[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason instanceof Error ? reason.name : typeof reason);
  };
  process.on('unhandledRejection', listener);
  return {
    check: () => expect(seen, 'unhandled rejections').toEqual([]),
    stop: () => {
      process.off('unhandledRejection', listener);
    },
  };
}

/** Runs `fn`, failing the case when it has not settled within {@link CASE_TIME_LIMIT_MS}. */
export async function bounded<T>(fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`a case did not finish within ${CASE_TIME_LIMIT_MS} ms`)),
      CASE_TIME_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([fn(), limit]);
  } finally {
    clearTimeout(timer);
  }
}
