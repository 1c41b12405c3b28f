/**
 * Fuzzing the callback's query through ndIdRouter + NdIdStrategy with a real session and the
 * real provider (autoApprove): random and mutated `code`, `state`, `error` and
 * `error_description`, duplicated and bracketed parameters, prototype keys, 100 KB values and
 * broken percent-encodings, alone or combined with the browser's real pending state and a
 * mutated real code.
 *
 * Whatever the query: no 5xx and no stack trace, no signed-in session, no redirect to the
 * success page, no secret or personal data in the page, and an answer in bounded time.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseForbidden,
  bounded,
  expectNoLeak,
  fuzzOptions,
  guardUnhandledRejections,
  startFuzzRp,
  type FuzzRp,
} from './support.js';

let rp: FuzzRp;
let forbidden: string[];

const rejections = guardUnhandledRejections();

beforeAll(async () => {
  rp = await startFuzzRp({ kind: 'provider' });
  forbidden = baseForbidden();
});
afterAll(async () => {
  await rp?.close();
  rejections.stop();
  rejections.check();
});

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** What a query value can be: placeholders are replaced by the browser's real state or a mutated real code. */
type Value = { raw: string } | { real: 'state' } | { real: 'mutated-code'; at: number; by: number };

const KEYS = [
  'code',
  'state',
  'error',
  'error_description',
  'code[]',
  'state[]',
  'error[]',
  'code[a]',
  'state[b][c]',
  'a[b]',
  '__proto__',
  '__proto__[code]',
  'constructor',
  'constructor[prototype][code]',
  'prototype',
  'hasOwnProperty',
  'toString',
  'returnTo',
  '%63ode', // "code", percent-encoded
  'st%61te',
  'code%00',
  '',
];

const ODD_VALUES = [
  '',
  '%00',
  'a%00b',
  '%C3%28', // invalid UTF-8
  '%FF%FE',
  '%E0%80%80', // overlong
  '%ED%A0%80', // lone surrogate
  '%F4%90%80%80', // above U+10FFFF
  '%',
  '%%',
  '%2',
  '%zz',
  '%25',
  '+',
  '%2B%20',
  '%0D%0ASet-Cookie:%20x=1',
  '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
  'access_denied',
  'server_error',
  'invalid_request%22%3E%3Cimg',
  '..%2F..%2F',
  'null',
  'undefined',
  '%7B%22a%22%3A1%7D',
];

const huge = fc
  .tuple(fc.constantFrom('A', '%41', 'é', '%FF', '<', '%00'), fc.integer({ min: 50_000, max: 100_000 }))
  .map(([unit, bytes]) => ({ raw: unit.repeat(Math.ceil(bytes / unit.length)) }));

const value: fc.Arbitrary<Value> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }).map((s) => ({ raw: encodeURIComponent(s) })) },
  { weight: 3, arbitrary: fc.string({ maxLength: 60 }).map((s) => ({ raw: s.replace(/[&#=]/g, '') })) },
  { weight: 4, arbitrary: fc.constantFrom(...ODD_VALUES).map((raw) => ({ raw })) },
  { weight: 3, arbitrary: fc.constant({ real: 'state' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      real: fc.constant('mutated-code' as const),
      at: fc.nat(),
      by: fc.integer({ min: 1, max: 63 }),
    }),
  },
  { weight: 1, arbitrary: huge },
);

const key = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)) },
);

/** A query: pairs, most of them with a code or an error so the strategy treats it as a callback. */
const query = fc.record({
  pairs: fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 6 }),
  /** Add `code=<garbage>` or `error=<garbage>` up front, so most cases reach the callback path. */
  lead: fc.constantFrom('code', 'error', 'none'),
  leadValue: value,
  /** Approve at the provider first, so a real code exists to mutate. */
  approve: fc.boolean(),
});

/** `code` with one character replaced by another base64url character: never the real code. */
function mutateCode(code: string, at: number, by: number): string {
  const i = at % code.length;
  const next = BASE64URL[(BASE64URL.indexOf(code[i]!) + by) % BASE64URL.length]!;
  return code.slice(0, i) + next + code.slice(i + 1);
}

describe('fuzzing the callback query', () => {
  it('no query signs anyone in, answers 5xx, shows a stack, or leaks a secret or personal data', async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(query, async ({ pairs, lead, leadValue, approve }) => {
        cases += 1;
        await bounded(async () => {
          const browser = rp.browser();
          // A login in progress in this browser: its state is real.
          const started = await browser.get('/auth/login');
          expect(started.status).toBe(302);
          const authorize = new URL(started.headers.location as string);
          const state = authorize.searchParams.get('state')!;
          let code = 'no-real-code-in-this-case';
          if (approve) {
            const approved = await fetch(authorize, { redirect: 'manual' });
            code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
          }
          const render = (v: Value): string =>
            'raw' in v ? v.raw : v.real === 'state' ? encodeURIComponent(state) : mutateCode(code, v.at, v.by);
          const parts = pairs.map(([k, v]) => `${k}=${render(v)}`);
          if (lead !== 'none') parts.unshift(`${lead}=${render(leadValue)}`);
          const path = `/auth/callback?${parts.join('&')}`;

          const res = await browser.get(path).redirects(0);
          expect(res.status, 'status').toBeLessThan(500);
          if (res.status === 302 || res.status === 303) {
            // Only a fresh login may redirect (a query with neither code nor error), and only to the provider.
            expect(String(res.headers.location)).toMatch(/\/v2\/oauth\/authorize\?/);
          } else {
            expect([400, 401, 403, 414, 431]).toContain(res.status);
          }
          expectNoLeak(res.text ?? '', [...forbidden, ...(approve ? [code] : [])], 'callback page');
          if (res.text) expect(res.text).not.toMatch(/<script|<img/i);
          const me = await browser.get('/me');
          expect(me.status, 'the browser is signed in').toBe(401);
        });
      }),
      fuzzOptions(1000),
    );
    expect(await rp.signedInSessions()).toBe(0);
    expect(cases).toBeGreaterThanOrEqual(fuzzOptions(1000).numRuns);
  }, 120_000);

  it("the browser's real pending state with a garbage, mutated or duplicated code or error never signs in", async () => {
    const notState = fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...KEYS.filter((k) => k !== 'state' && k !== 'st%61te')) },
      {
        weight: 1,
        arbitrary: fc
          .string({ maxLength: 12 })
          .map((s) => encodeURIComponent(s))
          .filter((k) => k !== 'state'),
      },
    );
    const focused = fc.record({
      shape: fc.oneof(
        { weight: 4, arbitrary: fc.constant('code' as const) },
        { weight: 1, arbitrary: fc.constantFrom('error', 'error+description', 'code+code', 'code+error', 'code[]') },
      ),
      first: value.filter((v) => !('real' in v && v.real === 'state')),
      second: value.filter((v) => !('real' in v && v.real === 'state')),
      extra: fc.array(
        fc.tuple(
          notState,
          value.filter((v) => !('real' in v && v.real === 'state')),
        ),
        { maxLength: 3 },
      ),
      approve: fc.boolean(),
      stateFirst: fc.boolean(),
    });
    let reachedProvider = 0;
    await fc.assert(
      fc.asyncProperty(focused, async ({ shape, first, second, extra, approve, stateFirst }) => {
        await bounded(async () => {
          const browser = rp.browser();
          const started = await browser.get('/auth/login');
          const authorize = new URL(started.headers.location as string);
          const state = authorize.searchParams.get('state')!;
          let code = 'no-real-code-in-this-case';
          if (approve) {
            const approved = await fetch(authorize, { redirect: 'manual' });
            code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
          }
          const render = (v: Value): string =>
            'raw' in v ? v.raw : v.real === 'state' ? state : mutateCode(code, v.at, v.by);
          const parts: string[] = {
            code: [`code=${render(first)}`],
            error: [`error=${render(first)}`],
            'error+description': [`error=${render(first)}`, `error_description=${render(second)}`],
            'code+code': [`code=${render(first)}`, `code=${approve ? code : render(second)}`],
            'code+error': [`code=${approve ? code : render(first)}`, `error=${render(second)}`],
            'code[]': [`code[]=${approve ? code : render(first)}`],
          }[shape];
          parts.push(...extra.map(([k, v]) => `${k}=${render(v)}`));
          const stateParam = `state=${encodeURIComponent(state)}`;
          // The provider's iss (RFC 9207), which every response it sends carries.
          parts.push(`iss=${encodeURIComponent(`${authorize.origin}/v2`)}`);
          if (stateFirst) parts.unshift(stateParam);
          else parts.push(stateParam);

          const res = await browser.get(`/auth/callback?${parts.join('&')}`).redirects(0);
          expect(res.status, 'status').toBeLessThan(500);
          if (res.status === 302) {
            // `code[]` is not `code`: with neither code nor error the strategy starts a fresh login.
            expect(String(res.headers.location)).toMatch(/\/v2\/oauth\/authorize\?/);
          } else {
            expect([400, 401, 403, 431]).toContain(res.status);
          }
          const logged = rp.logLines.splice(0);
          if (logged.some((line) => line.includes('"code":"token_request_failed"'))) reachedProvider += 1;
          expectNoLeak(res.text, [...forbidden, ...(approve ? [code] : [])], 'callback page');
          expectNoLeak(logged.join('\n'), [...forbidden, ...(approve ? [code] : [])], 'log');
          expect(res.text).not.toMatch(/<script|<img/i);
          expect((await browser.get('/me')).status, 'the browser is signed in').toBe(401);
        });
      }),
      fuzzOptions(600),
    );
    expect(await rp.signedInSessions()).toBe(0);
    // A good share of the cases got past the state check and were refused by the provider.
    expect(reachedProvider).toBeGreaterThan(fuzzOptions(600).numRuns / 5);
  }, 120_000);

  it('the same browser and provider do sign in with the untouched code and state (the fuzz cases are not vacuous)', async () => {
    const browser = rp.browser();
    const started = await browser.get('/auth/login');
    const approved = await fetch(new URL(started.headers.location as string), { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location')!);
    const res = await browser.get(callback.pathname + callback.search).redirects(0);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/signed-in');
    expect((await browser.get('/me')).status).toBe(200);
  });
});
