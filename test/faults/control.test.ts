/**
 * The fault-injection controls themselves: validation, how long a fault lasts (`times`, `forMs`
 * on the provider's clock), which requests it reaches, the opt-in HTTP control and its CLI flag,
 * and that no fault can crash the provider, in process or as its own process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../../src/provider/cli.js';
import {
  FAULT_ENDPOINTS,
  type Fault,
  type FaultEndpoint,
  type FaultOptions,
  type StartedProvider,
} from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { startProviderProcess } from '../helpers/provider-process.js';
import { manualClock, pkce, authorizeQuery, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import { guardProcess, settle } from './support.js';

guardProcess();

const DISCOVERY = '/v2/.well-known/openid-configuration';
const PATHS: Record<FaultEndpoint, { method: 'GET' | 'POST'; path: string }> = {
  authorize: { method: 'GET', path: '/v2/oauth/authorize' },
  token: { method: 'POST', path: '/v2/oauth/token' },
  userinfo: { method: 'GET', path: '/v2/oauth/userinfo' },
  jwks: { method: 'GET', path: '/v2/.well-known/jwks.json' },
  discovery: { method: 'GET', path: DISCOVERY },
};

let started: StartedProvider | undefined;
const cliRuns: CliOutcome[] = [];
afterEach(async () => {
  await started?.close();
  started = undefined;
  for (const o of cliRuns.splice(0)) if ('started' in o) await o.started.close();
});

/** Status of a GET, without following redirects. */
async function statusOf(path: string, base = started!.baseUrl): Promise<number> {
  const res = await fetch(`${base}${path}`, { redirect: 'manual' });
  await res.arrayBuffer();
  return res.status;
}

describe('inject() refuses mistakes with a TypeError that says what is wrong', () => {
  let shared: StartedProvider;
  beforeAll(async () => {
    shared = await startTestProvider();
  });
  afterAll(() => shared.close());

  it.each([
    ['an unknown kind', { kind: 'slow' }, {}, /kind must be one of latency, status, reset/],
    ['a missing kind', {}, {}, /kind must be one of/],
    ['a fault that is not an object', 'status', {}, /must be an object/],
    [
      'an unknown endpoint',
      { kind: 'reset' },
      { endpoint: 'mobile' },
      /endpoint must be one of authorize, token, userinfo, jwks, discovery or all/,
    ],
    [
      'an ID-token fault on userinfo',
      { kind: 'bad_signature' },
      { endpoint: 'userinfo' },
      /bad_signature fault applies only to token/,
    ],
    [
      'a userinfo fault on every endpoint',
      { kind: 'sub_mismatch' },
      { endpoint: 'all' },
      /sub_mismatch fault applies only to userinfo/,
    ],
    [
      'a truncated body on authorize',
      { kind: 'truncated' },
      { endpoint: 'authorize' },
      /applies only to token, userinfo, jwks, discovery/,
    ],
    ['times of 0', { kind: 'reset' }, { times: 0 }, /times must be a whole number from 1 to 1000000; got 0/],
    ['fractional times', { kind: 'reset' }, { times: 1.5 }, /times must be a whole number/],
    [
      'NaN as forMs',
      { kind: 'reset' },
      { forMs: Number.NaN },
      /forMs must be a whole number from 1 to 86400000; got NaN/,
    ],
    ['a negative latency', { kind: 'latency', ms: -5 }, {}, /latency ms must be a whole number from 0 to 600000/],
    ['a latency without ms', { kind: 'latency' }, {}, /latency ms must be a whole number/],
    ['a 200 status', { kind: 'status', status: 200 }, {}, /status must be a whole number from 400 to 599; got 200/],
    ['a field of another kind', { kind: 'reset', ms: 10 }, {}, /a reset fault has no "ms" field/],
    ['an unknown option', { kind: 'reset' }, { count: 2 }, /unknown option "count"; allowed: endpoint, times, forMs/],
  ])('%s', (_name, fault, options, message) => {
    expect(() => shared.provider.faults.inject(fault as Fault, options as FaultOptions)).toThrow(TypeError);
    expect(() => shared.provider.faults.inject(fault as Fault, options as FaultOptions)).toThrow(message);
    expect(shared.provider.faults.active()).toEqual([]);
  });
});

describe('how long a fault lasts', () => {
  it('with times: 2, the next two requests fail and the third is answered normally', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'discovery', times: 2 });
    expect(started.provider.faults.active()).toMatchObject([{ remaining: 2, endpoint: 'discovery' }]);
    expect(await statusOf(DISCOVERY)).toBe(503);
    expect(started.provider.faults.active()).toMatchObject([{ remaining: 1 }]);
    expect(await statusOf(DISCOVERY)).toBe(503);
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(started.provider.faults.active()).toEqual([]);
  });

  it('with neither times nor forMs, only the next request fails', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'discovery' });
    expect(await statusOf(DISCOVERY)).toBe(500);
    expect(await statusOf(DISCOVERY)).toBe(200);
  });

  it('with forMs, requests fail until the provider clock passes the window, however many there are', async () => {
    const clock = manualClock();
    started = await startTestProvider({ clock: clock.now });
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'discovery', forMs: 1000 });
    expect(started.provider.faults.active()).toMatchObject([{ expiresAt: clock.now() + 1000 }]);
    for (let i = 0; i < 5; i++) expect(await statusOf(DISCOVERY)).toBe(503);
    clock.advance(0.999);
    expect(await statusOf(DISCOVERY)).toBe(503);
    clock.advance(0.001);
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(started.provider.faults.active()).toEqual([]);
  });

  it('with both times and forMs, the fault ends at whichever comes first', async () => {
    const clock = manualClock();
    started = await startTestProvider({ clock: clock.now });
    started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'discovery', times: 1, forMs: 60_000 });
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'jwks', times: 100, forMs: 1000 });
    expect(await statusOf(DISCOVERY)).toBe(500);
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(await statusOf(PATHS.jwks.path)).toBe(503);
    clock.advance(1);
    expect(await statusOf(PATHS.jwks.path)).toBe(200);
  });

  it('handle.clear() removes one fault and faults.clear() removes them all', async () => {
    started = await startTestProvider();
    const { faults } = started.provider;
    const first = faults.inject({ kind: 'status', status: 500 }, { endpoint: 'discovery', times: 10 });
    faults.inject({ kind: 'status', status: 503 }, { endpoint: 'jwks', times: 10 });
    first.clear();
    first.clear(); // a second clear is harmless
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(faults.active().map((f) => f.id)).not.toContain(first.id);
    expect(await statusOf(PATHS.jwks.path)).toBe(503);
    faults.clear();
    expect(faults.active()).toEqual([]);
    expect(await statusOf(PATHS.jwks.path)).toBe(200);
  });

  it('active() is a snapshot: changing it changes no fault', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'discovery', times: 1 });
    const [listed] = started.provider.faults.active();
    listed!.remaining = 100;
    (listed!.fault as { status: number }).status = 404;
    expect(await statusOf(DISCOVERY)).toBe(500);
    expect(await statusOf(DISCOVERY)).toBe(200);
  });
});

describe('which requests a fault reaches', () => {
  it('endpoint "all" (the default for status) reaches every endpoint, one request each', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 500 }, { times: 3 });
    expect(started.provider.faults.active()).toMatchObject([{ endpoint: 'all' }]);
    expect(await statusOf(DISCOVERY)).toBe(500);
    expect(await statusOf(PATHS.jwks.path)).toBe(500);
    const authorize = await fetch(`${started.baseUrl}${PATHS.authorize.path}`, { redirect: 'manual' });
    expect(authorize.status).toBe(500);
    expect(authorize.headers.get('content-type')).toMatch(/^text\/html/);
    await authorize.arrayBuffer();
    expect(await statusOf(DISCOVERY)).toBe(200);
  });

  it('a fault for one endpoint leaves the others alone', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'jwks', times: 5 });
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(await statusOf(PATHS.jwks.path)).toBe(500);
  });

  it('the oldest applicable fault goes first, one fault per request', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'discovery' });
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'discovery' });
    expect(await statusOf(DISCOVERY)).toBe(500);
    expect(await statusOf(DISCOVERY)).toBe(503);
    expect(await statusOf(DISCOVERY)).toBe(200);
  });

  it('a JSON-only fault on "all" passes over authorize without using itself up', async () => {
    started = await startTestProvider({ autoApprove: true });
    started.provider.faults.inject({ kind: 'non_json' }, { times: 1 });
    const { challenge } = pkce();
    expect(await statusOf(`${PATHS.authorize.path}?${authorizeQuery(challenge)}`)).toBe(302);
    const res = await fetch(`${started.baseUrl}${DISCOVERY}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Sign in to continue');
  });

  it('a truncated answer keeps its status and declares exactly the bytes it sends', async () => {
    started = await startTestProvider();
    const whole = await (await fetch(`${started.baseUrl}${DISCOVERY}`)).text();
    started.provider.faults.inject({ kind: 'truncated' }, { endpoint: 'discovery' });
    const res = await fetch(`${started.baseUrl}${DISCOVERY}`);
    const cut = await res.text();
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(cut));
    expect(whole.startsWith(cut)).toBe(true);
    expect(cut.length).toBe(Math.floor(whole.length / 2));
    expect(() => JSON.parse(cut)).toThrow(SyntaxError);
  });

  it('a 503 carries Retry-After and an OAuth error body; the token code is not consumed by it', async () => {
    started = await startTestProvider({ autoApprove: true });
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'token' });
    const res = await fetch(`${started.baseUrl}${PATHS.token.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(await res.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The service is temporarily unavailable. Try again later.',
    });
  });

  it('faults are logged by kind and endpoint only', async () => {
    const lines: string[] = [];
    started = await startTestProvider({ log: (line) => lines.push(line) });
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'discovery' });
    await statusOf(DISCOVERY);
    expect(lines).toContain('faults: injected status #1 on discovery');
    expect(lines).toContain('discovery: fault injected: status');
    expect(lines.join('\n')).not.toContain(TEST_CLIENT.clientSecret);
  });
});

/** JSON call to the HTTP control. */
async function control(method: 'POST' | 'GET' | 'DELETE', path = '/_provider/faults', body?: unknown) {
  const res = await fetch(`${started!.baseUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

describe('HTTP control of faults', () => {
  it('is off by default: every /_provider/faults request is a 404 and injects nothing', async () => {
    started = await startTestProvider();
    expect((await control('POST', undefined, { kind: 'status', status: 503 })).status).toBe(404);
    expect((await control('GET')).status).toBe(404);
    expect((await control('DELETE')).status).toBe(404);
    expect((await control('DELETE', '/_provider/faults/1')).status).toBe(404);
    expect(await statusOf(DISCOVERY)).toBe(200);
  });

  it('with faultControl: true, POST injects, GET lists, DELETE by id and DELETE all clear', async () => {
    started = await startTestProvider({ faultControl: true });
    const created = await control('POST', undefined, { kind: 'status', status: 503, endpoint: 'discovery', times: 2 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 1,
      fault: { kind: 'status', status: 503 },
      endpoint: 'discovery',
      remaining: 2,
    });
    expect(await statusOf(DISCOVERY)).toBe(503);
    expect((await control('GET')).body).toEqual({
      faults: [{ id: 1, fault: { kind: 'status', status: 503 }, endpoint: 'discovery', remaining: 1 }],
    });

    expect((await control('DELETE', '/_provider/faults/1')).status).toBe(204);
    expect((await control('DELETE', '/_provider/faults/1')).status).toBe(404);
    expect(await statusOf(DISCOVERY)).toBe(200);

    await control('POST', undefined, { kind: 'latency', ms: 1, forMs: 60_000 });
    await control('POST', undefined, { kind: 'reset', endpoint: 'jwks', times: 3 });
    expect(((await control('GET')).body!.faults as unknown[]).length).toBe(2);
    expect((await control('DELETE')).status).toBe(204);
    expect((await control('GET')).body).toEqual({ faults: [] });
  });

  it('a bad fault is a 400 whose description says what is wrong', async () => {
    started = await startTestProvider({ faultControl: true });
    const res = await control('POST', undefined, { kind: 'status', status: 700 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'faults: status must be a whole number from 400 to 599; got 700',
    });
    expect((await control('POST', undefined, { kind: 'reset', colour: 'red' })).body!.error_description).toMatch(
      // The double quotes of the sentence are mended to single ones in an error_description (RFC 6749 5.2).
      /a reset fault has no 'colour' field; allowed: kind, endpoint, times, forMs/,
    );
    expect((await control('POST', undefined, ['reset'])).status).toBe(400);
  });

  it('a body that is not JSON is refused (415 without the JSON type, 400 when unparsable)', async () => {
    started = await startTestProvider({ faultControl: true });
    const plain = await fetch(`${started.baseUrl}/_provider/faults`, { method: 'POST', body: 'kind=reset' });
    expect(plain.status).toBe(415);
    await plain.arrayBuffer();
    const broken = await fetch(`${started.baseUrl}/_provider/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.text()).not.toMatch(/\bat .+:\d+:\d+/);
    expect(started.provider.faults.active()).toEqual([]);
  });

  it('the control paths themselves are never faulted', async () => {
    started = await startTestProvider({ faultControl: true });
    await control('POST', undefined, { kind: 'status', status: 500, forMs: 60_000 });
    expect((await control('GET')).status).toBe(200);
    expect((await control('DELETE')).status).toBe(204);
  });

  it('faultControl must be a boolean', async () => {
    await expect(startTestProvider({ faultControl: 'yes' as unknown as boolean })).rejects.toThrow(
      /faultControl must be true or false/,
    );
  });
});

describe('the --fault-control flag of nd-id-provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nd-id-faults-'));
  writeFileSync(join(dir, 'rp.pub.pem'), testKeyPair('rp').publicKeyPem);
  const clientsFile = join(dir, 'clients.json');
  writeFileSync(
    clientsFile,
    JSON.stringify([
      {
        clientId: 'demo',
        clientSecret: 'demo-secret-value',
        redirectUris: ['http://localhost:3000/callback'],
        publicKeyFile: 'rp.pub.pem',
      },
    ]),
  );

  async function run(argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const outcome = await runCli(argv, {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env: { ND_ID_SUBJECT_SECRET: 'faults-subject-secret-01' },
    });
    cliRuns.push(outcome);
    return { outcome, out: out.join(''), err: err.join('') };
  }

  it('is listed in --help', async () => {
    expect((await run(['--help'])).out).toContain('--fault-control');
  });

  it('turns the HTTP control on and warns that anyone who can reach the port can use it', async () => {
    const { outcome, err } = await run(['--clients', clientsFile, '--port', '0', '--fault-control']);
    if (!('started' in outcome)) throw new Error('did not start');
    expect(err).toContain('fault control is on');
    const res = await fetch(`${outcome.started.baseUrl}/_provider/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'status', status: 503, endpoint: 'jwks' }),
    });
    expect(res.status).toBe(201);
    expect((await fetch(`${outcome.started.baseUrl}${PATHS.jwks.path}`)).status).toBe(503);
  });

  it('without the flag, the control is a 404', async () => {
    const { outcome, err } = await run(['--clients', clientsFile, '--port', '0']);
    if (!('started' in outcome)) throw new Error('did not start');
    expect(err).not.toContain('fault control');
    expect((await fetch(`${outcome.started.baseUrl}/_provider/faults`)).status).toBe(404);
  });
});

/** Send one raw request; resolves with the status, or the connection error code. Never rejects. */
function rawRequest(base: string, method: 'GET' | 'POST', path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const req = httpRequest(
      url,
      { method, agent: false, headers: method === 'POST' ? { 'content-type': 'application/json' } : {} },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

/** Every fault kind (with small numbers), paired with every endpoint it applies to. */
const EVERY_FAULT: Fault[] = [
  { kind: 'latency', ms: 5 },
  { kind: 'status', status: 500 },
  { kind: 'status', status: 503 },
  { kind: 'reset' },
  { kind: 'truncated' },
  { kind: 'non_json' },
  { kind: 'bad_signature' },
  { kind: 'rotated_key' },
  { kind: 'unknown_key' },
  { kind: 'expired_id_token' },
  { kind: 'wrong_audience' },
  { kind: 'sub_mismatch' },
  { kind: 'issuer_mismatch' },
];

describe('no fault crashes the provider', () => {
  it('every kind on every endpoint it applies to, five times over, leaves the provider answering', async () => {
    started = await startTestProvider({ autoApprove: true });
    const results: (number | string)[] = [];
    for (let round = 0; round < 5; round++) {
      for (const fault of EVERY_FAULT) {
        for (const endpoint of FAULT_ENDPOINTS) {
          try {
            started.provider.faults.inject(fault, { endpoint });
          } catch {
            continue; // this kind does not apply to this endpoint
          }
          const { method, path } = PATHS[endpoint];
          results.push(await rawRequest(started.baseUrl, method, path));
        }
      }
    }
    expect(results).toContain('ECONNRESET');
    expect(results).toContain(503);
    expect(results.filter((r) => typeof r === 'string' && r !== 'ECONNRESET')).toEqual([]);
    expect(await statusOf(DISCOVERY)).toBe(200);
    expect(started.provider.faults.active()).toEqual([]);
  });

  it('a client that gives up during a latency fault, and closing the provider mid-wait, end promptly', async () => {
    started = await startTestProvider();
    started.provider.faults.inject({ kind: 'latency', ms: 600_000 }, { endpoint: 'discovery', times: 2 });
    const gaveUp = await settle(fetch(`${started.baseUrl}${DISCOVERY}`, { signal: AbortSignal.timeout(100) }), 5000);
    expect((gaveUp.error as Error).name).toBe('TimeoutError');
    const waiting = fetch(`${started.baseUrl}${DISCOVERY}`).then(
      (r) => r.status,
      () => 'closed',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = await settle(started.close(), 5000);
    started = undefined;
    expect(closing.error).toBeUndefined();
    expect([503, 'closed']).toContain((await settle(waiting, 5000)).value);
  });

  it('as its own process with --fault-control, it survives every kind of fault sent over HTTP', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-faults-proc-'));
    writeFileSync(join(dir, 'rp.pub.pem'), testKeyPair('rp').publicKeyPem);
    const file = join(dir, 'clients.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          clientId: 'demo',
          clientSecret: 'demo-secret-value',
          redirectUris: ['http://localhost:3000/callback'],
          publicKeyFile: 'rp.pub.pem',
        },
      ]),
    );
    const { child, baseUrl: base } = await startProviderProcess(
      ['--clients', file, '--port', '0', '--auto-approve', '--fault-control'],
      'faults-subject-secret-01',
    );
    let exitCode: number | null | undefined;
    child.once('exit', (code) => {
      exitCode = code;
    });
    try {
      for (const fault of EVERY_FAULT) {
        for (const endpoint of FAULT_ENDPOINTS) {
          const res = await fetch(`${base}/_provider/faults`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...fault, endpoint }),
          });
          await res.arrayBuffer();
          if (res.status !== 201) continue;
          await rawRequest(base, PATHS[endpoint].method, PATHS[endpoint].path);
        }
      }
      expect(exitCode).toBeUndefined();
      expect((await fetch(`${base}${DISCOVERY}`)).status).toBe(200);
    } finally {
      if (exitCode === undefined) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
