/**
 * Fuzzing what the provider answers (served by the stub): mutated ID tokens (flipped bits,
 * reordered or cut segments, altered headers, forged signatures: alg none, HS256 keyed with the
 * public key, an attacker's key named by kid, embedded jwk, jku or x5u, unknown crit), claims of
 * the wrong JSON type or missing, token and userinfo bodies of the wrong shape, and mutated
 * userinfo JWEs (block key and attributes: flipped bits, reordered segments, altered headers,
 * zip, algorithms outside the allowlists).
 *
 * Every case is refused with an IdError (never a TypeError or another error from our code),
 * whose message holds no secret, token, key or attribute value, in bounded time; through the
 * router, no case signs anyone in or shows a 5xx page or a stack.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { CompactEncrypt, CompactSign, exportJWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import { generatePkcePair } from '../../src/pkce.js';
import { importRsaPublicKey } from '../../src/keys.js';
import {
  encryptUserinfo,
  sendJson,
  startStubProvider,
  STUB_PATHS,
  type StubProvider,
} from '../helpers/stub-provider.js';
import { applyMutation, b64u, compactMutation, type CompactMutation } from './jose-mutations.js';
import {
  baseForbidden,
  guardUnhandledRejections,
  bounded,
  CLIENT_SECRET,
  CLIENT_TIMEOUT_MS,
  expectNoLeak,
  fuzzOptions,
  startFuzzRp,
  tokenPieces,
  type FuzzRp,
} from './support.js';
import { pooledKeyObjects } from '../helpers/keys.js';

const NONCE = 'fuzz-nonce-0123456789abcdef';
const ATTRIBUTES = {
  'profile.name': 'TAN AH KOW',
  'profile.nric_number': 'S9812381D',
  'profile.passport_expiry_date': '2031-05-17',
};

let stub: StubProvider;
let client: IdClient;
let attacker: { privateKey: KeyObject; publicJwk: Record<string, unknown> };
let forbidden: string[];

const rejections = guardUnhandledRejections();

beforeAll(async () => {
  stub = await startStubProvider();
  stub.userinfo.data = { ...ATTRIBUTES };
  client = new IdClient({
    clientId: stub.clientId,
    clientSecret: CLIENT_SECRET,
    privateKey: stub.rpPrivateKeyPem,
    redirectUri: 'https://rp.example/callback',
    hostname: stub.origin,
    timeout: CLIENT_TIMEOUT_MS,
  });
  const pair = pooledKeyObjects();
  attacker = { privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid: 'attacker' } };
  forbidden = [...baseForbidden(), ...Object.values(ATTRIBUTES), stub.accessToken];
});
afterAll(async () => {
  client?.close();
  await stub?.close();
  rejections.stop();
  rejections.check();
});
beforeEach(() => {
  restoreStub();
});

function restoreStub(): void {
  stub.claims = {};
  stub.header = {};
  stub.nonce = NONCE;
  stub.override(STUB_PATHS.token, undefined);
  stub.override(STUB_PATHS.userinfo, undefined);
}

function callback(): ReturnType<IdClient['callback']> {
  return client.callback({ code: 'fuzz-code', nonce: NONCE, codeVerifier: generatePkcePair().codeVerifier });
}

/** Asserts `promise` rejects with an IdError whose message leaks none of `secrets`; returns the error. */
async function expectRefused(promise: Promise<unknown>, secrets: readonly string[]): Promise<IdError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  if (caught === undefined) expect.fail('the mutated response was accepted');
  if (!(caught instanceof IdError)) {
    // Name only: the message of an unexpected error could itself hold a value.
    expect.fail(`expected an IdError, got ${caught instanceof Error ? caught.name : typeof caught}`);
  }
  expectNoLeak(`${caught.name} ${caught.code} ${caught.message}`, secrets, 'error message');
  return caught;
}

// ----- ID tokens ------------------------------------------------------------------------------

/** Forged signatures: each is what an attacker without the provider's key can produce. */
type Forgery =
  | { kind: 'alg-none'; alg: string; signature: string }
  | { kind: 'hs256-with-public-key'; as: 'pem' | 'jwk' | 'n' }
  | { kind: 'attacker-key'; header: Record<string, unknown> }
  | { kind: 'provider-key-bad-alg'; alg: 'RS384' | 'RS512' | 'PS256' }
  | { kind: 'unknown-crit'; crit: unknown };

const forgery: fc.Arbitrary<Forgery> = fc.oneof(
  fc.record({
    kind: fc.constant('alg-none' as const),
    alg: fc.constantFrom('none', 'None', 'NONE', 'nOnE'),
    signature: fc.constantFrom('', 'AA', 'e30'),
  }),
  fc.record({
    kind: fc.constant('hs256-with-public-key' as const),
    as: fc.constantFrom('pem' as const, 'jwk' as const, 'n' as const),
  }),
  fc.record({
    kind: fc.constant('attacker-key' as const),
    header: fc.constantFrom<Record<string, unknown>>(
      { kid: 'k1' },
      {},
      { kid: 'attacker', jwk: 'EMBED' },
      { jwk: 'EMBED' },
      { kid: 'attacker', jku: 'http://127.0.0.1:1/jwks.json' },
      { kid: 'k1', jku: 'http://127.0.0.1:1/jwks.json' },
      { kid: 'attacker', x5u: 'http://127.0.0.1:1/cert.pem' },
      { kid: 'k1', x5c: ['MIIB'] },
      { kid: '../../../../etc/passwd' },
      { kid: 'k1" OR "1"="1' },
    ),
  }),
  fc.record({
    kind: fc.constant('provider-key-bad-alg' as const),
    alg: fc.constantFrom('RS384' as const, 'RS512' as const, 'PS256' as const),
  }),
  fc.record({
    kind: fc.constant('unknown-crit' as const),
    crit: fc.oneof(
      fc.array(
        fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s !== 'b64'),
        { minLength: 1, maxLength: 3 },
      ),
      fc.constantFrom<unknown>([], 'exp', ['exp'], [''], [1], null, {}),
    ),
  }),
);

async function forge(f: Forgery): Promise<string> {
  const payload = new TextEncoder().encode(JSON.stringify(stub.idTokenClaims()));
  const providerKey = stub.keys[0]!;
  switch (f.kind) {
    case 'alg-none':
      return `${b64u(JSON.stringify({ alg: f.alg, typ: 'JWT' }))}.${b64u(payload)}.${f.signature}`;
    case 'hs256-with-public-key': {
      const pem = createPublicKey({ key: providerKey.publicJwk as never, format: 'jwk' }).export({
        format: 'pem',
        type: 'spki',
      });
      const secret =
        f.as === 'pem'
          ? Buffer.from(pem)
          : f.as === 'jwk'
            ? Buffer.from(JSON.stringify(providerKey.publicJwk))
            : Buffer.from(String(providerKey.publicJwk.n));
      return new CompactSign(payload).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(secret);
    }
    case 'attacker-key': {
      const header = { alg: 'RS256', ...f.header, ...(f.header.jwk === 'EMBED' ? { jwk: attacker.publicJwk } : {}) };
      return new CompactSign(payload).setProtectedHeader(header as { alg: string }).sign(attacker.privateKey);
    }
    case 'provider-key-bad-alg':
      return new CompactSign(payload).setProtectedHeader({ alg: f.alg, kid: 'k1' }).sign(providerKey.privateKey);
    case 'unknown-crit': {
      const header: Record<string, unknown> = { alg: 'RS256', kid: 'k1', crit: f.crit };
      if (Array.isArray(f.crit))
        for (const name of f.crit)
          if (typeof name === 'string' && name !== '' && !(name in header)) header[name] = true;
      // jose refuses to sign with an unknown crit, so sign the bytes by hand with the provider's key.
      const h = b64u(JSON.stringify(header));
      const p = b64u(payload);
      const { createSign } = await import('node:crypto');
      const signature = createSign('RSA-SHA256').update(`${h}.${p}`).sign(providerKey.privateKey).toString('base64url');
      return `${h}.${p}.${signature}`;
    }
  }
}

/** A claim given a value of the wrong type or content, or removed; the token is then signed with the provider's real key. */
type ClaimChange = { claim: string; value: unknown } | { claim: string; removed: true };

function wrongValues(claim: string): fc.Arbitrary<unknown> {
  const any = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 20 }),
    fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  );
  const now = Math.floor(Date.now() / 1000);
  const valid: Record<string, (v: unknown) => boolean> = {
    iss: (v) => v === stub.issuer,
    sub: (v) => typeof v === 'string' && v !== '',
    aud: (v) => v === stub.clientId || (Array.isArray(v) && v.includes(stub.clientId)),
    exp: (v) => typeof v === 'number' && v > now - 600,
    iat: (v) => typeof v === 'number' && v < now + 600,
    nbf: (v) => typeof v === 'number' && v < now + 600,
    nonce: (v) => v === NONCE,
    azp: (v) => v === stub.clientId,
    at_hash: () => false, // any value we choose differs from the real hash
  };
  return any.filter((v) => !valid[claim]!(v));
}

const claimChange: fc.Arbitrary<ClaimChange> = fc.oneof(
  fc
    .constantFrom('iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'azp')
    .chain((claim) => wrongValues(claim).map((value) => ({ claim, value }))),
  fc.constantFrom('iss', 'sub', 'aud', 'exp', 'iat', 'nonce').map((claim) => ({ claim, removed: true as const })),
);

type IdTokenCase =
  | { kind: 'mutated'; mutation: CompactMutation }
  | { kind: 'forged'; forgery: Forgery }
  | { kind: 'claim'; change: ClaimChange };

const idTokenCase: fc.Arbitrary<IdTokenCase> = fc.oneof(
  { weight: 3, arbitrary: compactMutation(3).map((mutation) => ({ kind: 'mutated' as const, mutation })) },
  { weight: 2, arbitrary: forgery.map((f) => ({ kind: 'forged' as const, forgery: f })) },
  { weight: 2, arbitrary: claimChange.map((change) => ({ kind: 'claim' as const, change })) },
);

async function idTokenFor(c: IdTokenCase): Promise<{ token: string; original: string }> {
  const original = await stub.idToken();
  if (c.kind === 'mutated') return { token: applyMutation(original, c.mutation), original };
  if (c.kind === 'forged') return { token: await forge(c.forgery), original };
  stub.claims = 'removed' in c.change ? { [c.change.claim]: undefined } : { [c.change.claim]: c.change.value };
  return { token: await stub.idToken(), original };
}

/** Wrong shapes of the whole token response. */
const tokenBody = fc.oneof(
  fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map((body) => ({ json: body })),
  fc.record({
    field: fc.constantFrom('access_token', 'id_token'),
    value: fc.oneof(fc.constant<unknown>(undefined), wrongType()),
  }),
  fc.constantFrom('', 'not json', '{', '<html>error</html>', '{"access_token":', '\u0000').map((text) => ({ text })),
);

function wrongType(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(''),
    fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  );
}

describe('fuzzing the ID token and the token response', () => {
  it('the unmutated answers sign in (the fuzz cases are not vacuous)', async () => {
    const result = await callback();
    expect(result.sub).toBe(stub.sub);
    const info = await client.userinfo({ sub: result.sub, accessToken: result.accessToken });
    expect(info.data).toEqual(ATTRIBUTES);
  });

  it('every mutated, forged or ill-typed ID token is refused with an IdError that leaks nothing', async () => {
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(idTokenCase, async (c) => {
        restoreStub();
        const { token, original } = await idTokenFor(c);
        fc.pre(token !== original);
        stub.serveTokens({ access_token: stub.accessToken, id_token: token });
        const err = await bounded(() =>
          expectRefused(callback(), [...forbidden, ...tokenPieces(original), ...tokenPieces(token)]),
        );
        codes.set(err.code, (codes.get(err.code) ?? 0) + 1);
      }),
      fuzzOptions(3000),
    );
    // The cases reach deep into validation, not only the first check.
    expect(codes.get('id_token_signature_invalid') ?? 0).toBeGreaterThan(0);
    expect([...codes.keys()].length).toBeGreaterThanOrEqual(8);
  }, 120_000);

  it('token responses of the wrong shape or with ill-typed fields are refused with an IdError', async () => {
    await fc.assert(
      fc.asyncProperty(tokenBody, async (shape) => {
        restoreStub();
        const idToken = await stub.idToken();
        stub.override(STUB_PATHS.token, (_req, res) => {
          if ('text' in shape) {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(shape.text);
          } else if ('json' in shape) {
            sendJson(res, 200, shape.json);
          } else {
            const body: Record<string, unknown> = { access_token: stub.accessToken, id_token: idToken };
            if (shape.value === undefined) delete body[shape.field];
            else body[shape.field] = shape.value;
            sendJson(res, 200, body);
          }
        });
        await bounded(() => expectRefused(callback(), [...forbidden, ...tokenPieces(idToken)]));
      }),
      fuzzOptions(400),
    );
  }, 60_000);

  it('extra fields in the token response and extra claims in the ID token are ignored: the login still succeeds', async () => {
    const registered = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'azp', '__proto__']);
    const extra = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !registered.has(k)),
      fc.jsonValue({ maxDepth: 2 }),
      { minKeys: 1, maxKeys: 4 },
    );
    await fc.assert(
      fc.asyncProperty(extra, extra, async (claims, fields) => {
        restoreStub();
        stub.claims = claims;
        const idToken = await stub.idToken();
        const body: Record<string, unknown> = { ...fields, access_token: stub.accessToken, id_token: idToken };
        stub.serveTokens(body);
        const result = await bounded(() => callback());
        expect(result.sub).toBe(stub.sub);
      }),
      fuzzOptions(150),
    );
  }, 60_000);

  it('a payload with "__proto__" and "constructor" claims is read as plain data', async () => {
    const claims = stub.idTokenClaims();
    const json = JSON.stringify(claims).replace(
      /^\{/,
      '{"__proto__":{"sub":"someone-else","admin":true},"constructor":{"prototype":{"x":1}},',
    );
    const token = await new CompactSign(new TextEncoder().encode(json))
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(stub.keys[0]!.privateKey);
    stub.serveTokens({ access_token: stub.accessToken, id_token: token });
    const result = await callback();
    expect(result.sub).toBe(stub.sub);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

// ----- Userinfo ------------------------------------------------------------------------------

type UserinfoCase =
  | { kind: 'body'; json: unknown }
  | { kind: 'field'; field: 'sub' | 'key' | 'data'; value: unknown }
  | { kind: 'attribute-type'; value: unknown }
  | { kind: 'key-jwe'; mutation: CompactMutation }
  | { kind: 'attribute-jwe'; scope: number; mutation: CompactMutation }
  | { kind: 'algorithms'; keyAlg: string; keyEnc: string; dataAlg: string; dataEnc: string }
  | { kind: 'block-key-plaintext'; plaintext: string }
  | { kind: 'attribute-plaintext'; bytes: readonly number[] };

const userinfoCase: fc.Arbitrary<UserinfoCase> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc
      .jsonValue({ maxDepth: 2 })
      .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
      .map((json) => ({ kind: 'body' as const, json })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        kind: fc.constant('field' as const),
        field: fc.constantFrom('sub' as const, 'key' as const, 'data' as const),
        value: fc.oneof(fc.constant<unknown>(undefined), wrongType(), fc.string({ maxLength: 10 })),
      })
      // Still valid: the user's own sub, and an empty data object (no attributes).
      .filter(
        ({ field, value }) => !(field === 'sub' && value === stub.sub) && !(field === 'data' && isEmptyObject(value)),
      ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('attribute-type' as const), value: wrongType() }) },
  { weight: 3, arbitrary: compactMutation(5).map((mutation) => ({ kind: 'key-jwe' as const, mutation })) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('attribute-jwe' as const),
      scope: fc.nat({ max: 2 }),
      mutation: compactMutation(5),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      // Block key wrapped with an algorithm outside the allowlist.
      fc.record({
        kind: fc.constant('algorithms' as const),
        keyAlg: fc.constantFrom('RSA1_5', 'RSA-OAEP-384', 'RSA-OAEP-512'),
        keyEnc: fc.constant('A256GCM'),
        dataAlg: fc.constant('dir'),
        dataEnc: fc.constant('A128GCM'),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '',
          'null',
          '[]',
          '{}',
          '{"kty":"RSA","k":"AAAA"}',
          '{"kty":"oct"}',
          '{"kty":"oct","k":""}',
          '{"kty":"oct","k":5}',
          '\u00ff\u00fe',
        ),
        fc.string({ maxLength: 40 }),
      )
      .map((plaintext) => ({ kind: 'block-key-plaintext' as const, plaintext })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe0, 0x80, 0x80], [0x61, 0xf4, 0x90, 0x80, 0x80])
      .map((bytes) => ({ kind: 'attribute-plaintext' as const, bytes })),
  },
);

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

async function userinfoBodyFor(c: UserinfoCase): Promise<{ body: unknown; original: Record<string, unknown> }> {
  const rpPublic = importRsaPublicKey(stub.rp.publicKeyPem);
  const good = await encryptUserinfo(stub.userinfo, rpPublic, stub.sub);
  const original = good as unknown as Record<string, unknown>;
  switch (c.kind) {
    case 'body':
      return { body: c.json, original };
    case 'field': {
      const body: Record<string, unknown> = { ...good };
      if (c.value === undefined) delete body[c.field];
      else body[c.field] = c.value;
      return { body, original };
    }
    case 'attribute-type':
      return { body: { ...good, data: { ...good.data, 'profile.name': c.value } }, original };
    case 'key-jwe':
      return { body: { ...good, key: applyMutation(good.key, c.mutation) }, original };
    case 'attribute-jwe': {
      const scope = Object.keys(good.data)[c.scope]!;
      return {
        body: { ...good, data: { ...good.data, [scope]: applyMutation(good.data[scope]!, c.mutation) } },
        original,
      };
    }
    case 'algorithms':
      return { body: await encryptUserinfo({ ...stub.userinfo, ...c }, rpPublic, stub.sub), original };
    case 'block-key-plaintext': {
      const key = await new CompactEncrypt(new TextEncoder().encode(c.plaintext))
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
        .encrypt(rpPublic);
      return { body: { ...good, key }, original };
    }
    case 'attribute-plaintext': {
      const secret = Buffer.alloc(16, 7);
      const key = await new CompactEncrypt(
        new TextEncoder().encode(JSON.stringify({ kty: 'oct', k: secret.toString('base64url') })),
      )
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
        .encrypt(rpPublic);
      const value = await new CompactEncrypt(Uint8Array.from(c.bytes))
        .setProtectedHeader({ alg: 'dir', enc: 'A128GCM' })
        .encrypt(secret);
      return { body: { ...good, key, data: { ...good.data, 'profile.name': value } }, original };
    }
  }
}

/** True when `body` is the untouched answer (a mutation that changed nothing). */
function unchanged(body: unknown, original: Record<string, unknown>): boolean {
  return JSON.stringify(body) === JSON.stringify(original);
}

describe('fuzzing the userinfo response', () => {
  it('every mutated, ill-typed or wrongly encrypted userinfo answer is refused with an IdError that leaks nothing', async () => {
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(userinfoCase, async (c) => {
        restoreStub();
        const { body, original } = await userinfoBodyFor(c);
        fc.pre(!unchanged(body, original));
        stub.override(STUB_PATHS.userinfo, (_req, res) => sendJson(res, 200, body));
        const pieces = [original.key as string, ...Object.values(original.data as Record<string, string>)].flatMap(
          tokenPieces,
        );
        const err = await bounded(() =>
          expectRefused(client.userinfo({ sub: stub.sub, accessToken: stub.accessToken }), [...forbidden, ...pieces]),
        );
        codes.set(err.code, (codes.get(err.code) ?? 0) + 1);
      }),
      fuzzOptions(2000),
    );
    for (const code of [
      'userinfo_malformed',
      'userinfo_key_decrypt_failed',
      'userinfo_data_decrypt_failed',
      'userinfo_alg_not_allowed',
      'userinfo_key_invalid',
    ]) {
      expect(codes.get(code) ?? 0, code).toBeGreaterThan(0);
    }
  }, 120_000);
});

describe('an ID token whose azp names another party', () => {
  it.each([['another-client'], [''], [false], [null]])(
    'with a single audience and azp %j is refused as id_token_azp_mismatch',
    async (azp) => {
      restoreStub();
      stub.claims = { azp };
      const err = await expectRefused(callback(), forbidden);
      expect(err.code).toBe('id_token_azp_mismatch');
    },
  );

  it('with azp equal to our client id it is accepted', async () => {
    restoreStub();
    stub.claims = { azp: stub.clientId };
    await expect(callback()).resolves.toMatchObject({ sub: stub.sub });
  });
});

describe('a userinfo answer without its data object', () => {
  it.each([
    ['missing', undefined],
    ['null', null],
  ])('with data %s is refused as userinfo_malformed, not read as "no attributes"', async (_label, value) => {
    const good = await stub.userinfoBody();
    const body: Record<string, unknown> = { ...good };
    if (value === undefined) delete body.data;
    else body.data = value;
    stub.override(STUB_PATHS.userinfo, (_req, res) => sendJson(res, 200, body));
    const err = await expectRefused(client.userinfo({ sub: stub.sub, accessToken: stub.accessToken }), forbidden);
    expect(err.code).toBe('userinfo_malformed');
  });

  it('an empty data object is still a valid answer with no attributes', async () => {
    const good = await stub.userinfoBody();
    stub.override(STUB_PATHS.userinfo, (_req, res) => sendJson(res, 200, { sub: good.sub, key: good.key, data: {} }));
    await expect(client.userinfo({ sub: stub.sub, accessToken: stub.accessToken })).resolves.toEqual({
      sub: stub.sub,
      data: {},
    });
  });
});

// ----- Through the router ---------------------------------------------------------------------

describe('fuzzing provider answers through ndIdRouter and the strategy', () => {
  let rp: FuzzRp;
  beforeAll(async () => {
    rp = await startFuzzRp({ kind: 'stub', stub });
  });
  afterAll(async () => {
    await rp?.close();
  });

  it('no mutated answer signs anyone in, answers 500 or shows a stack, a secret or personal data', async () => {
    const anyCase = fc.oneof(
      idTokenCase.map((c) => ({ where: 'token' as const, c })),
      userinfoCase.map((c) => ({ where: 'userinfo' as const, c })),
    );
    await fc.assert(
      fc.asyncProperty(anyCase, async (chosen) => {
        restoreStub();
        await bounded(async () => {
          const browser = rp.browser();
          const started = await browser.get('/auth/login').redirects(0);
          const authorize = new URL(started.headers.location as string);
          stub.nonce = authorize.searchParams.get('nonce')!;
          const state = authorize.searchParams.get('state')!;
          let secrets = forbidden;
          if (chosen.where === 'token') {
            const { token, original } = await idTokenFor(chosen.c);
            fc.pre(token !== original);
            stub.serveTokens({ access_token: stub.accessToken, id_token: token });
            secrets = [...secrets, ...tokenPieces(original), ...tokenPieces(token)];
          } else {
            const { body, original } = await userinfoBodyFor(chosen.c);
            fc.pre(!unchanged(body, original));
            stub.override(STUB_PATHS.userinfo, (_req, res) => sendJson(res, 200, body));
            secrets = [
              ...secrets,
              ...[original.key as string, ...Object.values(original.data as Record<string, string>)].flatMap(
                tokenPieces,
              ),
            ];
          }
          const res = await browser
            .get(`/auth/callback?code=fuzz-code&state=${encodeURIComponent(state)}`)
            .redirects(0);
          // 401 refused, 502 "the service answered nonsense", 500 only for what no person can
          // cause: a block key that this app's private key cannot decrypt (indistinguishable from
          // a misconfigured key), a malformed userinfo, an ID token signed with an algorithm the
          // app does not accept; never a redirect to the success page.
          const serverSide = rp.logLines.some((l) =>
            /"code":"(userinfo_key_(decrypt_failed|invalid)|userinfo_malformed|id_token_alg_not_allowed)"/.test(l),
          );
          expect(serverSide ? [500] : [401, 502]).toContain(res.status);
          expectNoLeak(res.text, secrets, 'callback page');
          expectNoLeak(rp.logLines.splice(0).join('\n'), secrets, 'log');
          expect((await browser.get('/me')).status, 'the browser is signed in').toBe(401);
        });
      }),
      fuzzOptions(600),
    );
    expect(await rp.signedInSessions()).toBe(0);
  }, 120_000);
});
