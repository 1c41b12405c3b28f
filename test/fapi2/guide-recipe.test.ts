/**
 * docs/fapi2.md's "Switching an existing app" (the README's app in the FAPI 2.0 profile, marked
 * `<!-- readme-test: fapi -->`) runs as written against the built package and the built
 * provider CLI (`nd-id-provider --clients clients.json`) with a FAPI client registered by the
 * app's own jwks_uri, and signs a person in. Its "A national service's FAPI login" (marked
 * `national`) runs as written against the provider configured in code as such a service, and
 * against oidc-provider for the JWS-in-JWE userinfo. (test/readme.test.ts type-checks the snippets.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { docSnippets, installedAppTsconfig, repoRoot } from '../helpers/doc-snippets.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { stopChild } from '../helpers/stop-child.js';
import { Browser } from '../helpers/harness.js';
import { PERSON_INFO, signInAtProvider, startOidcProvider } from '../helpers/oidc-provider.js';
import { startProvider } from '../helpers/provider.js';

const workDir = join(repoRoot, '.tmp', `fapi2-guide-${process.pid}`);
const CLI = join(repoRoot, 'dist', 'cjs', 'provider', 'cli.js');
const recipe = docSnippets('ts').find((s) => s.file === 'docs/fapi2.md' && s.kind === 'fapi');
const children: ChildProcess[] = [];

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
});
afterAll(async () => {
  for (const child of children) await stopChild(child);
  rmSync(workDir, { recursive: true, force: true });
});

function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

async function waitFor(
  run: { child: ChildProcess; output: () => string },
  pattern: RegExp,
  what: string,
): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null) throw new Error(`${what} exited:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it('the guide has the recipe', () => {
  expect(recipe?.code).toContain("profile: 'fapi2'");
});

it("runs the README's app switched to the profile against npx nd-id-provider with a FAPI client in clients.json", async () => {
  const port = await freePort();
  const appOrigin = `http://127.0.0.1:${port}`;
  const callback = `${appOrigin}/auth/callback`;
  const rsa = testKeyPair('fapi-guide');
  const pem = (key: ReturnType<typeof generateKeyPairSync>['privateKey']): string =>
    key.export({ format: 'pem', type: 'pkcs8' }).toString();
  const assertionKey = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const idTokenKey = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const clients = join(workDir, 'clients.json');
  writeFileSync(
    clients,
    JSON.stringify([
      {
        clientId: 'my-app',
        redirectUris: [callback],
        publicKey: rsa.publicKeyPem,
        profile: 'fapi2',
        jwksUri: `${appOrigin}/auth/jwks.json`,
        idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
        idTokenEncryptedResponseEnc: 'A256GCM',
      },
    ]),
  );
  const provider = start([CLI, '--clients', clients, '--port', '0', '--auto-approve'], {
    ND_ID_SUBJECT_SECRET: randomBytes(24).toString('hex'),
  });
  const providerUrl = (await waitFor(provider, /ready at (http:\/\/\S+) /, 'nd-id-provider'))[1]!;

  const file = join(workDir, `${recipe!.id}.mts`);
  writeFileSync(file, recipe!.code);
  const app = start(['--import', 'tsx', file], {
    TSX_TSCONFIG_PATH: installedAppTsconfig(workDir),
    PORT: String(port),
    ND_ID_HOSTNAME: providerUrl,
    ND_ID_CLIENT_ID: 'my-app',
    ND_ID_PRIVATE_KEY: rsa.privateKeyPem,
    ND_ID_CLIENT_ASSERTION_KEY: assertionKey,
    ND_ID_ID_TOKEN_KEY: idTokenKey,
    ND_ID_REDIRECT_URI: callback,
    SESSION_SECRET: randomBytes(32).toString('hex'),
  });
  await waitFor(app, new RegExp(`Listening on ${appOrigin}`), 'the guide app');

  const jwks = (await (await fetch(`${appOrigin}/auth/jwks.json`)).json()) as { keys: { use: string }[] };
  expect(jwks.keys.map((k) => k.use)).toEqual(['sig', 'enc']);
  const browser = new Browser(appOrigin);
  const login = await browser.get('/auth/login?returnTo=%2Faccount');
  expect(login.status, app.output()).toBe(302);
  const authorize = new URL(login.location ?? '');
  expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const back = await fetch(authorize, { redirect: 'manual' });
  const done = await browser.get(back.headers.get('location') ?? '');
  expect(done.status, app.output()).toBe(302);
  expect(done.location).toBe('/account');
  const account = JSON.parse((await browser.get('/account')).text) as { user: { name: string } };
  expect(account.user.name).toMatch(/\S/);

  // A login without returnTo lands on / , which shows the person.
  const plain = new Browser(appOrigin);
  const started = await plain.get('/auth/login');
  const landed = await plain.get(
    (await fetch(new URL(started.location ?? ''), { redirect: 'manual' })).headers.get('location') ?? '',
  );
  expect(landed.location).toBe('/');
  expect((await plain.get('/')).text).toContain(`<p>Signed in as ${account.user.name}</p>`);
}, 60_000);

const national = docSnippets('ts').find((s) => s.file === 'docs/fapi2.md' && s.kind === 'national');

/** The guide's national-service app, run as written with its keys (PEM text) against `issuer`; its origin. */
async function startNationalApp(issuer: string, port: number, scope?: string): Promise<string> {
  const pem = (key: KeyObject): string => key.export({ format: 'pem', type: 'pkcs8' }).toString();
  const file = join(workDir, `${national!.id}.mts`);
  writeFileSync(file, national!.code);
  const origin = `http://127.0.0.1:${port}`;
  const app = start(['--import', 'tsx', file], {
    TSX_TSCONFIG_PATH: installedAppTsconfig(workDir),
    PORT: String(port),
    ND_ID_ISSUER: issuer,
    ND_ID_CLIENT_ID: 'my-app',
    ND_ID_REDIRECT_URI: `${origin}/auth/callback`,
    ND_ID_SIGNING_KEY: pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    ND_ID_ENCRYPTION_KEY: pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    SESSION_SECRET: randomBytes(32).toString('hex'),
    ...(scope === undefined ? {} : { ND_ID_SCOPE: scope }),
  });
  await waitFor(app, new RegExp(`Listening on ${origin}`), 'the national recipe app');
  return origin;
}

/** A login at the app: its PAR-only redirect, `approve` to the callback, then `/account`'s user. */
async function nationalLogin(
  origin: string,
  authorizeAt: string,
  approve: (authorize: URL) => Promise<URL>,
): Promise<Record<string, unknown>> {
  const browser = new Browser(origin);
  const login = await browser.get('/auth/login');
  expect(login.status, login.text).toBe(302);
  const authorize = new URL(login.location ?? '');
  expect(authorize.href.startsWith(authorizeAt)).toBe(true);
  expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const callback = await approve(authorize);
  const done = await browser.get(callback.pathname + callback.search);
  expect(done.status, done.text).toBe(302);
  expect(done.location).toBe('/account');
  return (JSON.parse((await browser.get('/account')).text) as { user: Record<string, unknown> }).user;
}

it('the guide has the national recipe, asking for the encryption it registered', () => {
  expect(national?.code).toContain("idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW'");
});

it('runs the national recipe against the provider configured in code as that service: issuer /fapi, ES256, ECDH-ES+A256KW / A256CBC-HS512, no iss, no userinfo', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const op = await startProvider({
    autoApprove: true,
    issuerPath: '/fapi',
    authorizationResponseIss: false,
    userinfo: false,
    clients: [
      {
        clientId: 'my-app',
        redirectUris: [`${origin}/auth/callback`],
        profile: 'fapi2',
        jwksUri: `${origin}/auth/jwks.json`,
        idTokenSignedResponseAlg: 'ES256',
        idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
        idTokenEncryptedResponseEnc: 'A256CBC-HS512',
      },
    ],
    log: () => {},
  });
  try {
    await startNationalApp(op.provider.issuer, port);
    const user = await nationalLogin(origin, `${op.baseUrl}/fapi/oauth/authorize?`, async (authorize) => {
      const approved = await fetch(authorize, { redirect: 'manual' });
      return new URL(approved.headers.get('location') ?? '');
    });
    const sub = op.provider.subjectFor('my-app', op.provider.personas[0]!.id);
    expect(user).toMatchObject({ sub, data: {}, claims: { iss: `${op.baseUrl}/fapi`, sub, aud: 'my-app' } });
    expect(user).not.toHaveProperty('userinfo');
    expect(op.provider.audit('my-app')).toEqual([]);
  } finally {
    await op.close();
  }
}, 60_000);

it('runs the national recipe against oidc-provider serving userinfo as an ES256 JWS inside an ECDH-ES+A256KW / A256CBC-HS512 JWE', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const op = await startOidcProvider({
    fapi: true,
    jwtUserinfo: true,
    clients: [
      {
        client_id: 'my-app',
        redirect_uris: [`${origin}/auth/callback`],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks_uri: `${origin}/auth/jwks.json`,
        id_token_signed_response_alg: 'ES256',
        id_token_encrypted_response_alg: 'ECDH-ES+A256KW',
        id_token_encrypted_response_enc: 'A256CBC-HS512',
        userinfo_signed_response_alg: 'ES256',
        userinfo_encrypted_response_alg: 'ECDH-ES+A256KW',
        userinfo_encrypted_response_enc: 'A256CBC-HS512',
        dpop_bound_access_tokens: true,
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
  });
  try {
    await startNationalApp(op.issuer, port, 'openid myinfo');
    const user = await nationalLogin(origin, `${op.issuer}/auth?`, (authorize) => signInAtProvider(authorize.href, op));
    expect(user).toMatchObject({
      sub: 'alice',
      data: {},
      claims: { iss: op.issuer, sub: 'alice', aud: 'my-app' },
      userinfo: { sub: 'alice', person_info: PERSON_INFO },
    });
    expect(op.requests.get('/me')).toBe(1);
  } finally {
    await op.close();
  }
}, 60_000);
