/**
 * The provider as a test kit: createTestProvider, scripted sign-ins (approveNext), login_hint,
 * personas from a file and at run time, a movable clock and several client keys. Every login
 * here is real HTTP against the provider, driven by IdClient or by an Express app.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import { decodeProtectedHeader } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../../src/client/id-client.js';
import { IdError } from '../../../src/errors.js';
import { generatePkcePair } from '../../../src/pkce.js';
import { NdIdStrategy } from '../../../src/passport/strategy.js';
import { ndIdRouter } from '../../../src/passport/router.js';
import { createTestProvider, DEFAULT_PERSONAS, type TestProvider } from '../../../src/provider/index.js';
import { runCli } from '../../../src/provider/cli.js';
import { rsaThumbprint } from '../../../src/keys.js';
import { pooledKeyObjects } from '../../helpers/keys.js';

const open: TestProvider[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

async function kit(options: Parameters<typeof createTestProvider>[0] = {}): Promise<TestProvider> {
  const t = await createTestProvider(options);
  open.push(t);
  return t;
}

/** A browser-less login with IdClient: authorize (answered at once by a scripted approval), then code exchange and userinfo. */
async function idClientLogin(t: TestProvider, client = new IdClient({ ...t.client, hostname: t.baseUrl })) {
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { url, nonce } = client.authorizationUrl({
    state: 'state-0123456789abcdefghij',
    codeChallenge,
    scope: ['openid', 'profile.name', 'profile.nric_number'],
  });
  const res = await fetch(url, { redirect: 'manual' });
  const back = new URL(res.headers.get('location') ?? 'http://invalid/');
  const code = back.searchParams.get('code');
  if (code === null) return { back, result: undefined };
  const tokens = await client.callback({ code, codeVerifier, nonce });
  const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
  return { back, result: { tokens, info } };
}

describe('createTestProvider', () => {
  it('starts on loopback with one client whose fields spread into IdClient; the key pair is reused per process', async () => {
    const a = await kit();
    const b = await kit({ redirectUri: 'http://127.0.0.1:4444/cb', clientId: 'other' });
    expect(new URL(a.baseUrl).hostname).toBe('127.0.0.1');
    expect(a.client).toMatchObject({ clientId: 'test-client', redirectUri: 'http://127.0.0.1:3000/auth/callback' });
    expect(b.client).toMatchObject({ clientId: 'other', redirectUri: 'http://127.0.0.1:4444/cb' });
    expect(a.client.privateKey).toBe(b.client.privateKey);
    expect(a.client.clientSecret).not.toBe(b.client.clientSecret);
    const fresh = await kit({ freshKeys: true });
    expect(fresh.client.privateKey).not.toBe(a.client.privateKey);

    a.provider.approveNext();
    const { result } = await idClientLogin(a);
    expect(result?.info.data['profile.name']).toBe(DEFAULT_PERSONAS[0]!['profile.name']);
  });
});

describe('approveNext', () => {
  it('answers the next request at once, as the chosen persona, in queue order; without one the QR page shows', async () => {
    const t = await kit();
    t.provider.approveNext({ persona: 'ben' });
    t.provider.approveNext({ persona: 'chandra' });
    expect((await idClientLogin(t)).result?.info.data['profile.name']).toBe('Ben Samplename');
    expect((await idClientLogin(t)).result?.info.data['profile.name']).toBe('Chandra Fictional');
    const client = new IdClient({ ...t.client, hostname: t.baseUrl });
    const { url } = client.authorizationUrl({
      state: 'state-0123456789abcdefghij',
      codeChallenge: generatePkcePair().codeChallenge,
    });
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-qr-payload');
  });

  it('changes ID-token claims for one login: an expired token and a missing nonce are refused by the client', async () => {
    const t = await kit();
    t.provider.approveNext({ claims: { exp: -120 } });
    await expect(idClientLogin(t)).rejects.toMatchObject({ code: 'id_token_expired' });
    t.provider.approveNext({ claims: { nonce: undefined } });
    await expect(idClientLogin(t)).rejects.toMatchObject({ code: 'nonce_missing' });
    t.provider.approveNext({ claims: { aud: 'someone-else' } });
    await expect(idClientLogin(t)).rejects.toBeInstanceOf(IdError);
    t.provider.approveNext();
    expect((await idClientLogin(t)).result?.tokens.claims.exp).toBeGreaterThan(Date.now() / 1000);
  });

  it('changes attribute values for one login, and can deny', async () => {
    const t = await kit();
    t.provider.approveNext({ persona: 'dewi', data: { 'profile.name': 'Someone Else' } });
    const { result } = await idClientLogin(t);
    expect(result?.info.data).toMatchObject({
      'profile.name': 'Someone Else',
      'profile.nric_number': 'G2345678' + result?.info.data['profile.nric_number']?.slice(-1),
    });
    t.provider.approveNext({ deny: true });
    const denied = await idClientLogin(t);
    expect(denied.back.searchParams.get('error')).toBe('access_denied');
    expect(denied.back.searchParams.get('state')).toBe('state-0123456789abcdefghij');
  });

  it('an answer for one client is not taken by another; a full persona object is added', async () => {
    const t = await kit();
    t.provider.approveNext({ clientId: 'not-this-one', persona: 'eko' });
    t.provider.approveNext({
      persona: {
        id: 'zoe',
        'profile.name': 'Zoe Added',
        'profile.nric_number': 'S1234567D',
        'profile.passport_expiry_date': '2030-01-01',
      },
    });
    expect((await idClientLogin(t)).result?.info.data['profile.name']).toBe('Zoe Added');
    expect(t.provider.personas.get('zoe')).toBeDefined();
  });

  it('refuses options it cannot use, naming them', async () => {
    const t = await kit();
    expect(() => t.provider.approveNext({ persona: 'nobody' })).toThrow(/persona "nobody" is unknown; known: ada, ben/);
    expect(() => t.provider.approveNext({ deny: true, claims: {} })).toThrow(/deny cannot be combined/);
    expect(() => t.provider.approveNext({ data: { 'profile.age': 'x' } })).toThrow(
      /data\["profile.age"\] is not an attribute/,
    );
  });
});

describe('login_hint, personas and the clock', () => {
  it('in auto-approve mode login_hint picks the persona; an unknown one is an error page naming the known ids', async () => {
    const t = await kit({ autoApprove: true });
    const client = new IdClient({ ...t.client, hostname: t.baseUrl });
    const { url } = client.authorizationUrl({
      state: 'state-0123456789abcdefghij',
      codeChallenge: generatePkcePair().codeChallenge,
    });
    const withHint = await fetch(`${url}&login_hint=farah`, { redirect: 'manual' });
    expect(withHint.status).toBe(302);
    const unknown = await fetch(`${url}&login_hint=nobody`, { redirect: 'manual' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('Known ids: ada, ben, chandra, dewi, eko, farah');
  });

  it('personas come from a file, change at run time, and bad ones are refused naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'personas-'));
    const file = join(dir, 'people.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          id: 'yan',
          'profile.name': 'Yan File',
          'profile.nric_number': 'T0123456G',
          'profile.passport_expiry_date': '2032-02-02',
        },
      ]),
    );
    const t = await kit({ personas: file });
    expect(t.provider.personas.map((p) => p.id)).toEqual(['yan']);
    t.provider.personas.add({
      id: 'xu',
      'profile.name': 'Xu Added',
      'profile.nric_number': 'S1234567D',
      'profile.passport_expiry_date': '2030-01-01',
    });
    t.provider.approveNext({ persona: 'xu' });
    expect((await idClientLogin(t)).result?.info.data['profile.name']).toBe('Xu Added');
    expect(t.provider.personas.remove('xu')).toBe(true);
    expect(() => t.provider.personas.remove('yan')).toThrow(/last persona/);
    expect(() =>
      t.provider.personas.add({
        id: 'bad',
        'profile.name': 'B',
        'profile.nric_number': 'S1234567A',
        'profile.passport_expiry_date': '2030-01-01',
      }),
    ).toThrow(/persona\["profile.nric_number"\]/);
    writeFileSync(join(dir, 'broken.json'), '[{"id": "q"}]');
    await expect(createTestProvider({ personas: join(dir, 'broken.json') })).rejects.toThrow(
      /personas\[0\]\["profile.name"\]/,
    );
    const cli = { out: [] as string[], err: [] as string[] };
    await runCli(['--list-personas', '--personas', file], {
      stdout: (s) => cli.out.push(s),
      stderr: (s) => cli.err.push(s),
      env: {},
    });
    expect(cli.out.join('')).toContain('Yan File');
  });

  it('moving the clock expires an authorization code without waiting', async () => {
    const t = await kit();
    const client = new IdClient({ ...t.client, hostname: t.baseUrl, clock: t.provider.clock });
    t.provider.approveNext();
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const { url, nonce } = client.authorizationUrl({ state: 'state-0123456789abcdefghij', codeChallenge });
    const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
    t.provider.advanceClock(61_000);
    await expect(client.callback({ code, codeVerifier, nonce })).rejects.toMatchObject({
      code: 'token_request_failed',
    });
    expect(() => t.provider.advanceClock(-1)).toThrow(TypeError);
  });
});

describe('several client keys', () => {
  it('userinfo is encrypted to the newest key, with its kid (default: the RFC 7638 thumbprint); setClientKeys changes them', async () => {
    const t = await kit();
    const next = pooledKeyObjects();
    const nextPem = next.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const current = createPrivateKey(t.client.privateKey);
    // First the client's own key alone: its kid is its thumbprint.
    t.provider.approveNext();
    let info = await idClientLoginRaw(t);
    expect(decodeProtectedHeader(info.key).kid).toBe(rsaThumbprint(createPublicKey(current)));
    // Rotation: the new key added last is used, with the kid given.
    const currentPem = createPublicKey(current).export({ format: 'pem', type: 'spki' }).toString();
    t.provider.setClientKeys(t.client.clientId, [currentPem, { key: nextPem, kid: 'app-2026-11' }]);
    t.provider.approveNext();
    info = await idClientLoginRaw(t);
    expect(decodeProtectedHeader(info.key).kid).toBe('app-2026-11');
    expect(() => t.provider.setClientKeys('nobody', [nextPem])).toThrow(/client "nobody" is not registered/);
    expect(() => t.provider.setClientKeys(t.client.clientId, ['not a key'])).toThrow(/setClientKeys: publicKeys\[0\]/);
  });
});

/** The raw userinfo answer of one scripted login (its `key` JWE header is what the test reads). */
async function idClientLoginRaw(t: TestProvider): Promise<{ key: string }> {
  const client = new IdClient({ ...t.client, hostname: t.baseUrl });
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { url, nonce } = client.authorizationUrl({ state: 'state-0123456789abcdefghij', codeChallenge });
  const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
  const { accessToken } = await client.callback({ code, codeVerifier, nonce });
  const res = await fetch(`${t.baseUrl}/v2/oauth/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
  return (await res.json()) as { key: string };
}

describe('an app written with the strategy, tested with nothing but createTestProvider, approveNext and supertest', () => {
  async function app(t: TestProvider, clock?: () => number) {
    const authenticator = new passport.Passport();
    authenticator.serializeUser((u, done) => done(null, u));
    authenticator.deserializeUser((u: Express.User, done) => done(null, u));
    authenticator.use(
      new NdIdStrategy({
        ...t.client,
        callbackURL: t.client.redirectUri,
        hostname: t.baseUrl,
        ...(clock ? { clock } : {}),
      }),
    );
    const a = express();
    a.use(session({ secret: 'test', resave: false, saveUninitialized: false }));
    a.use(authenticator.session());
    a.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/me' }));
    a.get('/me', (req, res) =>
      res.json({ name: (req.user as { data?: Record<string, string> } | undefined)?.data?.['profile.name'] ?? null }),
    );
    return a;
  }

  async function signIn(_t: TestProvider, a: express.Express) {
    const browser = request.agent(a);
    const login = await browser.get('/auth/login');
    const back = new URL(
      (await fetch(login.headers.location as string, { redirect: 'manual' })).headers.get('location')!,
    );
    return { browser, callback: await browser.get(back.pathname + back.search) };
  }

  it('signs in as two different personas', async () => {
    const t = await kit();
    const a = await app(t);
    for (const persona of ['ben', 'eko']) {
      t.provider.approveNext({ persona });
      const { browser, callback } = await signIn(t, a);
      expect(callback.status).toBe(302);
      expect((await browser.get('/me')).body.name).toBe(t.provider.personas.get(persona)!['profile.name']);
    }
  });

  it('reaches login_expired by moving the clock', async () => {
    const t = await kit();
    const a = await app(t, t.provider.clock);
    t.provider.approveNext();
    const browser = request.agent(a);
    const login = await browser.get('/auth/login');
    const back = new URL(
      (await fetch(login.headers.location as string, { redirect: 'manual' })).headers.get('location')!,
    );
    t.provider.advanceClock(11 * 60_000);
    const res = await browser.get(back.pathname + back.search);
    expect(res.status).toBe(401);
    expect(res.text).toContain('took too long');
  });
});
