/**
 * The CLI's rehearsal options, over HTTP: token lifetimes (--token-ttl, --code-ttl, --login-ttl),
 * a provider or client without userinfo (--no-userinfo, "userinfo": false), no `iss` in
 * authorization responses (--no-iss), the issuer path (--issuer-path), and the same options in
 * the clients file's object form (once refused as "unknown key"), a flag overriding the file.
 */
import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../../src/provider/cli.js';
import { testKeyPair } from '../helpers/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'nd-id-cli-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const running: CliOutcome[] = [];
afterEach(async () => {
  for (const o of running.splice(0)) if ('started' in o) await o.started.close();
});

const CLIENT = {
  clientId: 'generic-rp',
  clientSecret: 'generic-rp-secret-0123456789',
  redirectUris: ['http://127.0.0.1:3000/callback'],
  userinfo: false,
};

function file(content: unknown): string {
  const path = join(dir, `clients-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

async function start(argv: string[]): Promise<{ issuer: string; err: string; outcome: CliOutcome }> {
  const err: string[] = [];
  const outcome = await runCli([...argv, '--port', '0'], {
    stdout: () => undefined,
    stderr: (t) => err.push(t),
    env: { ND_ID_SUBJECT_SECRET: 'cli-options-subject-secret' },
  });
  running.push(outcome);
  return { issuer: 'started' in outcome ? outcome.started.provider.issuer : '', err: err.join(''), outcome };
}

async function discovery(issuer: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
}

/** An auto-approved login's callback parameters, and a token request for its code. */
async function login(issuer: string): Promise<{ callback: URLSearchParams; redeem: () => Promise<Response> }> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT.clientId,
    redirect_uri: CLIENT.redirectUris[0]!,
    scope: 'openid',
    state: 'state-0123456789',
    nonce: 'nonce-0123456789',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const res = await fetch(`${issuer}/oauth/authorize?${query}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const callback = new URL(res.headers.get('location') ?? '').searchParams;
  const redeem = () =>
    fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
        grant_type: 'authorization_code',
        code: callback.get('code'),
        redirect_uri: CLIENT.redirectUris[0],
        code_verifier: verifier,
      }),
    });
  return { callback, redeem };
}

function claimsOf(idToken: string): Record<string, number> {
  return JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, number>;
}

describe('nd-id-provider rehearsal options', () => {
  it('--token-ttl sets the access and ID token lifetime; --login-ttl the QR page window', async () => {
    const { issuer } = await start(['--clients', file([CLIENT]), '--auto-approve', '--token-ttl', '90']);
    const tokens = (await (await (await login(issuer)).redeem()).json()) as { expires_in: number; id_token: string };
    expect(tokens.expires_in).toBe(90);
    const claims = claimsOf(tokens.id_token);
    expect(claims['exp']! - claims['iat']!).toBe(90);

    const qr = await start(['--clients', file([CLIENT]), '--login-ttl', '60']);
    const page = await fetch(
      `${qr.issuer}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: CLIENT.clientId,
        redirect_uri: CLIENT.redirectUris[0]!,
        scope: 'openid',
        code_challenge: 'a'.repeat(43),
        code_challenge_method: 'S256',
      })}`,
    );
    expect(await page.text()).toContain('This code expires in about 1 minute.');
  });

  it('--code-ttl: a code older than its lifetime is refused with invalid_grant', async () => {
    const { issuer } = await start(['--clients', file([CLIENT]), '--auto-approve', '--code-ttl', '1']);
    const { redeem } = await login(issuer);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const res = await redeem();
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('--no-iss leaves iss out of the callback and discovery; --no-userinfo serves no userinfo endpoint', async () => {
    const { issuer } = await start(['--clients', file([CLIENT]), '--auto-approve', '--no-iss', '--no-userinfo']);
    const { callback } = await login(issuer);
    expect(callback.has('code')).toBe(true);
    expect(callback.has('iss')).toBe(false);
    const doc = await discovery(issuer);
    expect(doc['authorization_response_iss_parameter_supported']).toBeUndefined();
    expect(doc['userinfo_endpoint']).toBeUndefined();
    expect((await fetch(`${issuer}/oauth/userinfo`)).status).toBe(404);
  });

  it('a client with "userinfo": false needs no key; a token for it gets 403 insufficient_scope at userinfo', async () => {
    const keyed = { ...CLIENT, clientId: 'keyed-rp', userinfo: true, publicKey: testKeyPair('rp').publicKeyPem };
    const withKeyed = file({ clients: [CLIENT, keyed] });
    const { issuer } = await start(['--clients', withKeyed, '--auto-approve']);
    const { callback, redeem } = await login(issuer);
    expect(callback.get('iss')).toBe(issuer);
    const tokens = (await (await redeem()).json()) as { access_token: string };
    const info = await fetch(`${issuer}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(info.status).toBe(403);
  });

  it('takes issuerPath, authorizationResponseIss, userinfo and ttl from the clients file; a flag overrides the file', async () => {
    const rehearsal = file({
      issuerPath: '/fapi',
      authorizationResponseIss: false,
      userinfo: false,
      ttl: { accessToken: 300 },
      clients: [CLIENT],
    });
    const { issuer, outcome, err } = await start(['--clients', rehearsal, '--auto-approve']);
    expect(err).not.toContain('unknown key');
    if (!('started' in outcome)) throw new Error(err);
    expect(issuer).toBe(`${outcome.started.baseUrl}/fapi`);
    const doc = await discovery(issuer);
    expect(doc['issuer']).toBe(issuer);
    expect(doc['userinfo_endpoint']).toBeUndefined();
    const { callback, redeem } = await login(issuer);
    expect(callback.has('iss')).toBe(false);
    expect(((await (await redeem()).json()) as { expires_in: number }).expires_in).toBe(300);

    const overridden = await start(['--clients', rehearsal, '--issuer-path', '/idp', '--token-ttl', '120']);
    if (!('started' in overridden.outcome)) throw new Error(overridden.err);
    expect(overridden.issuer).toBe(`${overridden.outcome.started.baseUrl}/idp`);
  });

  it('refuses bad values in one go, naming each', async () => {
    const { outcome, err } = await start([
      '--clients',
      file({ issuerPath: 'fapi', color: 'blue', clients: [CLIENT] }),
      '--token-ttl',
      'ten',
    ]);
    expect(outcome).toEqual({ exitCode: 2 });
    expect(err).toContain('--token-ttl takes a number of seconds (for example 600); got "ten"');
    expect(err).toMatch(/has an unknown key "color"; allowed: clients, personas, issuerPath/);
    expect(err).toContain('issuerPath must be a path such as "/idp" or "/fapi"');
  });

  it('takes a client key as JWK JSON text wherever PEM text goes: publicKey, publicKeyFile', async () => {
    const jwk = createPublicKey(testKeyPair('rp').publicKeyPem).export({ format: 'jwk' });
    writeFileSync(join(dir, 'rp-public.jwk.json'), JSON.stringify(jwk));
    const keyed = { ...CLIENT, userinfo: true };
    const { outcome, err } = await start([
      '--clients',
      file([
        { ...keyed, publicKey: JSON.stringify(jwk) },
        { ...keyed, clientId: 'file-rp', publicKeyFile: 'rp-public.jwk.json' },
      ]),
    ]);
    expect(err).not.toContain('mistake');
    expect('started' in outcome).toBe(true);
    const bad = await start(['--clients', file([{ ...keyed, publicKey: '{"kty":' }])]);
    expect(bad.outcome).toEqual({ exitCode: 2 });
    expect(bad.err).toContain('starts with "{" but is not valid JSON (a JWK or JWKS)');
  });
});
