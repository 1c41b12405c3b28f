/**
 * Traces and metrics of a login, read with the OpenTelemetry SDK's in-memory exporter and a
 * metric reader registered here, over real HTTP against the bundled provider: a base login, a
 * FAPI 2.0 login and a refused one give the spans of each step (children of the flow's start and
 * callback) and count the logins by outcome; no attribute of any span or metric point carries a
 * value of the login (code, tokens, state, nonce, verifier, `sub`, secret, key, attribute).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import type { CallbackParams, UserinfoParams } from '../../src/client/types.js';
import { IdError } from '../../src/errors.js';
import { createLoginFlow, type LoginFlow } from '../../src/flow/login-flow.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { recordSession } from '../../src/flow/session.js';
import { INSTRUMENTATION_NAME, METRIC, SPAN } from '../../src/trace.js';
import { PACKAGE_VERSION } from '../../src/version.js';
import { testKeyPair } from '../helpers/keys.js';
import { metricPoints, outline, registerSdk, type RegisteredSdk } from '../helpers/otel.js';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { appKeys, type AppKeys, fapiIdClient, fapiRegistration } from '../fapi2/harness.js';

const CALLBACK = 'http://127.0.0.1:9999/callback';
const CLIENT_ID = 'traces-app';
const CLIENT_SECRET = 'traces-client-secret-0123456789';
const SCOPE = 'openid profile.name profile.nric_number profile.passport_expiry_date';
const rp = testKeyPair('traces');

/** Every attribute name a span or metric point of the package may carry (docs/operations.md). */
const DOCUMENTED_ATTRIBUTES = new Set([
  'server.address',
  'server.port',
  'nd_id.profile',
  'error.type',
  'nd_id.error.reason',
  'http.response.status_code',
  'outcome',
]);

let sdk: RegisteredSdk;
let provider: StartedProvider;
let fapiKeys: AppKeys;

beforeAll(async () => {
  sdk = registerSdk();
  fapiKeys = appKeys();
  provider = await startProvider({
    autoApprove: true,
    clients: [
      { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [CALLBACK], publicKey: rp.publicKeyPem },
      fapiRegistration(fapiKeys, CALLBACK),
    ],
  });
});
afterAll(async () => {
  await provider?.close();
  await sdk?.unregister();
});
afterEach(() => sdk.reset());

function baseClient(clientSecret = CLIENT_SECRET): IdClient {
  return new IdClient({
    clientId: CLIENT_ID,
    clientSecret,
    privateKey: rp.privateKeyPem,
    hostname: provider.baseUrl,
    redirectUri: CALLBACK,
  });
}

/** Every value of the login the client saw: what it was given and what it got back. */
function recordValues(client: IdClient, seen: string[]): IdClient {
  const callback = client.callback.bind(client);
  const userinfo = client.userinfo.bind(client);
  client.callback = async (params: CallbackParams) => {
    seen.push(params.code, params.codeVerifier, String(params.nonce ?? ''));
    const result = await callback(params);
    seen.push(result.sub, result.accessToken, result.idToken);
    return result;
  };
  client.userinfo = async (params: UserinfoParams) => {
    const result = await userinfo(params);
    seen.push(...Object.values(result.data).map(String), ...Object.values(result.claims ?? {}).map(String));
    return result;
  };
  return client;
}

/** Every string in `value` (a session record, a key as JWK). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(strings);
}

/** A login through the flow: started, approved by the provider, completed. Fails with the callback's error. */
async function signIn(flow: LoginFlow, seen: string[]): Promise<void> {
  const record: Record<string, unknown> = {};
  const session = recordSession(record);
  const { redirectUrl, state } = await flow.start(session);
  seen.push(state, ...strings(record), ...new URL(redirectUrl).searchParams.values());
  const back = new URL((await fetch(redirectUrl, { redirect: 'manual' })).headers.get('location') ?? '');
  const query = Object.fromEntries(back.searchParams);
  seen.push(...Object.values(query).filter((v) => !v.startsWith(provider.baseUrl)));
  await flow.complete(session, query);
}

function flowOf(client: IdClient): LoginFlow {
  return createLoginFlow({ client, redirectUri: CALLBACK, scope: SCOPE, replayStore: createMemoryReplayStore() });
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

/**
 * Fails when a value of the login (a substring of 8 characters or more of it) is in an attribute
 * of a span, a span event or a metric point, or when an attribute is not a documented one.
 */
async function expectNothingPersonal(secrets: readonly string[]): Promise<void> {
  const values = secrets.filter((s) => s.length >= 8);
  const attributes: [string, string, unknown][] = [];
  for (const span of sdk.spans()) {
    for (const [k, v] of Object.entries(span.attributes)) attributes.push([span.name, k, v]);
    for (const event of span.events)
      for (const [k, v] of Object.entries(event.attributes ?? {})) attributes.push([span.name, k, v]);
    if (span.status.message !== undefined) attributes.push([span.name, 'status.message', span.status.message]);
  }
  for (const point of metricPoints(await sdk.collect(), INSTRUMENTATION_NAME))
    for (const [k, v] of Object.entries(point.attributes)) attributes.push([point.name, k, v]);
  expect(attributes.length).toBeGreaterThan(20);
  for (const [where, key, value] of attributes) {
    expect(DOCUMENTED_ATTRIBUTES.has(key), `${where}: ${key}`).toBe(true);
    const text = String(value);
    for (const secret of values) expect(text.includes(secret), `${where}: ${key} carries a login value`).toBe(false);
  }
}

describe('traces of a login', () => {
  it('a base login: a span per step under the start and the callback, with the host and the profile', async () => {
    const client = baseClient();
    await signIn(flowOf(client), []);
    const spans = sdk.spans();
    expect(outline(spans)).toEqual([
      SPAN.loginStart,
      `  ${SPAN.discovery}`,
      SPAN.loginCallback,
      `  ${SPAN.token}`,
      `  ${SPAN.idTokenValidate}`,
      `    ${SPAN.jwks}`,
      `  ${SPAN.userinfo}`,
      `    ${SPAN.userinfoDecrypt}`,
    ]);
    const host = new URL(provider.baseUrl);
    for (const span of spans) {
      expect(span.instrumentationScope).toMatchObject({ name: 'passport-nd-id', version: PACKAGE_VERSION });
      expect(span.attributes, span.name).toMatchObject({
        'server.address': host.hostname,
        'server.port': Number(host.port),
        'nd_id.profile': 'base',
      });
      expect(span.attributes['error.type'], span.name).toBeUndefined();
      expect(span.status.code, span.name).toBe(0);
    }
    for (const name of [SPAN.discovery, SPAN.token, SPAN.jwks, SPAN.userinfo]) {
      expect(named(spans, name).attributes['http.response.status_code'], name).toBe(200);
    }
    // Decryption and validation are this process's work: no HTTP status of their own.
    expect(named(spans, SPAN.userinfoDecrypt).attributes['http.response.status_code']).toBeUndefined();
    expect(named(spans, SPAN.idTokenValidate).attributes['http.response.status_code']).toBeUndefined();
    client.close();
  });

  it('a FAPI 2.0 login: the push under the start, the ID token decrypted then validated', async () => {
    const client = fapiIdClient(fapiKeys, provider.baseUrl, CALLBACK);
    await signIn(flowOf(client), []);
    const spans = sdk.spans();
    expect(outline(spans)).toEqual([
      SPAN.loginStart,
      `  ${SPAN.par}`,
      `    ${SPAN.discovery}`,
      SPAN.loginCallback,
      `  ${SPAN.token}`,
      `  ${SPAN.idTokenDecrypt}`,
      `  ${SPAN.idTokenValidate}`,
      `    ${SPAN.jwks}`,
      `  ${SPAN.userinfo}`,
      `    ${SPAN.userinfoDecrypt}`,
    ]);
    for (const span of spans) expect(span.attributes['nd_id.profile'], span.name).toBe('fapi2');
    // The push and the token call are 201 and 200 (after the DPoP nonce round, when the provider asks one).
    expect(named(spans, SPAN.par).attributes['http.response.status_code']).toBe(201);
    expect(named(spans, SPAN.token).attributes['http.response.status_code']).toBe(200);
    client.close();
  });

  it('a refused token request: the token span and the callback carry the error code and the status', async () => {
    const client = baseClient('not-the-registered-secret-0123');
    const err = await signIn(flowOf(client), []).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IdError);
    const { code } = err as IdError;
    expect(code).toBe('token_request_failed');
    const spans = sdk.spans();
    const token = named(spans, SPAN.token);
    expect(token.attributes['error.type']).toBe(code);
    expect(token.attributes['http.response.status_code']).toBe(401);
    expect(token.status.code).toBe(2);
    const callback = named(spans, SPAN.loginCallback);
    expect(callback.attributes['error.type']).toBe(code);
    expect(callback.status.code).toBe(2);
    expect(spans.map((s) => s.name)).not.toContain(SPAN.idTokenValidate);
    client.close();
  });
});

describe('metrics of logins', () => {
  it('counts logins by outcome and records the callback duration in seconds', async () => {
    const before = metricPoints(await sdk.collect(), INSTRUMENTATION_NAME);
    const countOf = (points: typeof before, outcome: string): number =>
      points
        .filter((p) => p.name === METRIC.logins && p.attributes.outcome === outcome)
        .reduce((sum, p) => sum + (p.value as number), 0);
    const client = baseClient();
    await signIn(flowOf(client), []);
    await signIn(flowOf(client), []);
    const wrong = baseClient('not-the-registered-secret-0123');
    await expect(signIn(flowOf(wrong), [])).rejects.toThrow(IdError);
    const after = metricPoints(await sdk.collect(), INSTRUMENTATION_NAME);
    expect(countOf(after, 'signed_in') - countOf(before, 'signed_in')).toBe(2);
    expect(countOf(after, 'token_request_failed') - countOf(before, 'token_request_failed')).toBe(1);
    const signedIn = after.find((p) => p.name === METRIC.logins && p.attributes.outcome === 'signed_in');
    expect(signedIn?.attributes).toMatchObject({ 'nd_id.profile': 'base', 'server.address': '127.0.0.1' });
    const durations = after.filter(
      (p) =>
        p.name === METRIC.loginDuration &&
        p.attributes.outcome === 'signed_in' &&
        p.attributes['nd_id.profile'] === 'base',
    );
    expect(durations).toHaveLength(1);
    const histogram = durations[0]!.value as { count: number; sum: number; max: number };
    expect(histogram.count).toBeGreaterThanOrEqual(2);
    // Seconds, not milliseconds: a loopback callback takes well under ten seconds and more than nothing.
    expect(histogram.sum).toBeGreaterThan(0);
    expect(histogram.max).toBeLessThan(10);
    client.close();
    wrong.close();
  });
});

describe('no value of a login in a trace or a metric', () => {
  it('a base login: no code, token, state, nonce, verifier, sub, secret, key or attribute value', async () => {
    const seen: string[] = [CLIENT_SECRET, ...strings(rp.privateKeyPem.split('\n'))];
    const client = recordValues(baseClient(), seen);
    await signIn(flowOf(client), seen);
    expect(seen.length).toBeGreaterThan(12);
    await expectNothingPersonal(seen);
    client.close();
  });

  it('a FAPI 2.0 login: nor the request_uri, the DPoP key, the assertion or ID-token keys', async () => {
    const seen: string[] = [
      ...strings(fapiKeys.assertion.export({ format: 'jwk' })),
      ...strings(fapiKeys.idToken?.export({ format: 'jwk' })),
      ...fapiKeys.rsa.privateKeyPem.split('\n'),
    ];
    const client = recordValues(fapiIdClient(fapiKeys, provider.baseUrl, CALLBACK), seen);
    await signIn(flowOf(client), seen);
    expect(seen.some((s) => s.startsWith('urn:'))).toBe(true);
    await expectNothingPersonal(seen);
    client.close();
  });
});

describe('the package version the spans name', () => {
  it('is the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(PACKAGE_VERSION).toBe(pkg.version);
  });
});
