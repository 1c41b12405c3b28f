/**
 * Shared pieces of the fault-injection tests: a guard that records unhandled rejections and
 * uncaught exceptions (and fails the suite when there was one), a bound on how long a call may
 * take to settle, and a complete IdClient sign-in against an auto-approving provider.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { IdError, type IdErrorCode } from '../../src/errors.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { authorizeQuery, pkce, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import { testKeyPair } from '../helpers/keys.js';

/**
 * Install process-level guards for the file: every unhandled rejection or uncaught exception is
 * recorded, and afterEach and afterAll assert there was none.
 */
export function guardProcess(): { events: string[] } {
  const events: string[] = [];
  const onRejection = (reason: unknown): void => {
    events.push(
      `unhandledRejection: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)}`,
    );
  };
  const onException = (err: Error): void => {
    events.push(`uncaughtException: ${err.name}: ${err.message}`);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
  });
  afterEach(() => {
    expect(events).toEqual([]);
  });
  afterAll(() => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
    expect(events).toEqual([]);
  });
  return { events };
}

/** What a call ended with, and how long it took. */
export interface Settled<T> {
  value?: T;
  error?: unknown;
  ms: number;
}

/**
 * Await `promise`, but give up after `boundMs`: the test fails with "did not settle" rather
 * than hanging. Returns the value or the error, and the elapsed time.
 */
export async function settle<T>(promise: Promise<T>, boundMs: number): Promise<Settled<T>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((resolve) => {
    timer = setTimeout(() => resolve('hang'), boundMs);
  });
  try {
    const outcome = await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      hang,
    ]);
    if (outcome === 'hang') throw new Error(`the call did not settle within ${boundMs} ms`);
    return { ...outcome, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Assert that a settled call failed with an IdError of `code`; returns it. */
export function expectIdError(settled: Settled<unknown>, code: IdErrorCode): IdError {
  expect(
    settled.error,
    `expected ${code}, got a ${settled.error === undefined ? 'success' : 'different error'}`,
  ).toBeInstanceOf(IdError);
  const err = settled.error as IdError;
  expect(err.code).toBe(code);
  return err;
}

/** An IdClient registered as TEST_CLIENT, pointed at `started`. */
export function clientFor(
  started: StartedProvider,
  options: { timeout?: number; jwksCooldown?: number } = {},
): IdClient {
  return new IdClient({
    clientId: TEST_CLIENT.clientId,
    clientSecret: TEST_CLIENT.clientSecret,
    privateKey: testKeyPair('rp').privateKeyPem,
    redirectUri: TEST_CLIENT.redirectUri,
    hostname: started.baseUrl,
    ...options,
  });
}

/** A code from the (auto-approving) provider, with what callback needs to redeem it. */
export async function freshCode(
  started: StartedProvider,
): Promise<{ code: string; codeVerifier: string; nonce: string }> {
  const { verifier, challenge } = pkce();
  const nonce = `nonce-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, { nonce })}`, {
    redirect: 'manual',
  });
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}, not a redirect`);
  const code = new URL(res.headers.get('location') ?? '').searchParams.get('code');
  if (!code) throw new Error('authorize redirect carried no code');
  return { code, codeVerifier: verifier, nonce };
}

/** A whole sign-in with IdClient: code, callback, userinfo. */
export async function signIn(
  client: IdClient,
  started: StartedProvider,
): Promise<{ sub: string; data: Record<string, string> }> {
  const grant = await freshCode(started);
  const tokens = await client.callback(grant);
  return client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
}
