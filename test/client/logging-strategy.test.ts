/**
 * The strategy hands its logger to the IdClient it builds, and through the strategy and router
 * over real HTTP, with the provider made to fail each call, no log output (the logger, the
 * default console.error path, DEBUG=passport-nd-id*) carries the client secret, the code, the
 * state, the access token, the session cookie or the person's attributes.
 */
import createDebug from 'debug';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Fault } from '../../src/provider/index.js';
import { approve, CLIENT_SECRET, PERSONA, startRp, type Rp, type RpOptions } from '../passport/harness.js';

interface Line {
  level: string;
  event: Record<string, unknown>;
}

interface Case {
  name: string;
  options?: RpOptions;
  fault?: Fault & { endpoint: 'token' | 'userinfo' | 'jwks' };
  /** The client's own warn: code and endpoint; undefined when the failure is not server-side. */
  warn?: { code: string; endpoint: string };
}

const cases: Case[] = [
  {
    name: 'wrong client secret',
    options: { clientSecret: 'wrong-secret-KNOWN-71c0d2e9' },
    warn: { code: 'token_request_failed', endpoint: 'token' },
  },
  {
    name: 'service unreachable',
    options: { hostname: 'http://127.0.0.1:9', timeout: 2000 },
    warn: { code: 'provider_unreachable', endpoint: 'token' },
  },
  {
    name: 'token endpoint 500',
    fault: { kind: 'status', status: 500, endpoint: 'token' },
    warn: { code: 'provider_server_error', endpoint: 'token' },
  },
  {
    name: 'key set 503',
    fault: { kind: 'status', status: 503, endpoint: 'jwks' },
    warn: { code: 'provider_server_error', endpoint: 'jwks' },
  },
  {
    name: 'userinfo not JSON',
    fault: { kind: 'non_json', endpoint: 'userinfo' },
    warn: { code: 'provider_invalid_response', endpoint: 'userinfo' },
  },
  { name: 'ID token for another audience', fault: { kind: 'wrong_audience', endpoint: 'token' } },
];

let rp: Rp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  createDebug.disable();
  await rp?.close();
  rp = undefined;
});

/** One failing login; returns the values that must not be logged. */
async function failingLogin(c: Case, strategy: RpOptions['strategy'] = {}): Promise<string[]> {
  rp = await startRp({ ...c.options, strategy: { ...strategy } });
  const secrets = [
    CLIENT_SECRET,
    'wrong-secret-KNOWN-71c0d2e9',
    PERSONA['profile.nric_number'],
    PERSONA['profile.name'],
  ];
  rp.provider.server.on('request', (req) => {
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) secrets.push(auth.slice(7));
  });
  if (c.fault) {
    const { endpoint, ...fault } = c.fault;
    rp.provider.provider.faults.inject(fault as Fault, { endpoint });
  }
  const browser = rp.browser();
  const started = await browser.get('/auth/login');
  const cookie = String(started.headers['set-cookie'] ?? '')
    .split(';')[0]!
    .split('=')
    .slice(1)
    .join('=');
  const authorize = new URL(started.headers.location as string);
  // When the strategy points elsewhere (unreachable), the person still signs in at the provider.
  const back = await approve(
    c.options?.hostname ? new URL(authorize.pathname + authorize.search, rp.provider.baseUrl) : authorize,
  );
  // An unreachable service would have sent its own iss (RFC 9207): the callback names the issuer the strategy expects.
  if (c.options?.hostname) back.searchParams.set('iss', `${c.options.hostname}/v2`);
  secrets.push(
    cookie,
    back.searchParams.get('code')!,
    back.searchParams.get('state')!,
    authorize.searchParams.get('code_challenge')!,
  );
  const res = await browser.get(back.pathname + back.search);
  expect(res.status).toBeGreaterThanOrEqual(400);
  return secrets.filter((s) => s.length >= 6);
}

function expectClean(output: string, secrets: string[]): void {
  for (const value of secrets) expect(output, 'a secret value reached the log').not.toContain(value);
}

describe('strategy + router logging over real HTTP', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: the strategy logger gets the client warn, and no secret',
    async (_n, c) => {
      const lines: Line[] = [];
      const at = (level: string) => (event: unknown) => {
        lines.push({ level, event: event as Record<string, unknown> });
      };
      const secrets = await failingLogin(c, {
        logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
      });
      expectClean(JSON.stringify(lines), secrets);
      const warn = lines.find((l) => l.event.event === 'provider_call_failed');
      if (c.warn) expect(warn?.event).toMatchObject({ code: c.warn.code, endpoint: c.warn.endpoint });
      else expect(warn).toBeUndefined();
    },
  );

  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: console.error and DEBUG output carry no secret',
    async (_n, c) => {
      createDebug.enable('passport-nd-id*');
      const chunks: string[] = [];
      const keep = (...args: unknown[]) => {
        chunks.push(args.map(String).join(' '));
      };
      vi.spyOn(console, 'error').mockImplementation(keep);
      vi.spyOn(console, 'log').mockImplementation(keep);
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        chunks.push(String(chunk));
        return true;
      });
      const secrets = await failingLogin(c);
      vi.restoreAllMocks();
      const output = chunks.join('\n');
      expect(output).toContain('passport-nd-id');
      expectClean(output, secrets);
      // With DEBUG on, events are written once, by debug (util.inspect form: endpoint: 'token').
      if (c.warn) expect(output).toMatch(new RegExp(`endpoint['"]?:\\s?['"]${c.warn.endpoint}['"]`));
    },
  );
});
