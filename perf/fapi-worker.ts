/**
 * One client of `perf/login-fapi.ts` in its own process, so each measures only its own CPU:
 * `ours-base` (IdClient, base profile), `ours-fapi` (IdClient, fapi2), `floor` (the base login
 * plus the FAPI floor of perf/floor.ts, against BENCH_FAPI_ORIGIN) or `openid-client`
 * (openid-client 6 doing the same FAPI 2.0 login: PAR, private_key_jwt, DPoP, the encrypted ID
 * token, userinfo with DPoP, then the attributes decrypted with jose as its users would).
 *
 * Input (environment): BENCH_ROLE, BENCH_ORIGIN (the stub), BENCH_RP_PRIVATE_KEY (PKCS#8 PEM),
 * BENCH_ASSERTION_KEY and BENCH_ID_TOKEN_KEY (PKCS#8 PEM EC keys, FAPI roles), BENCH_CLIENT_ID,
 * BENCH_NONCE; BENCH_SRC (optional): a directory holding another commit's `src/`, whose IdClient
 * the `ours-*` roles then run. Commands on stdin, one per line: `run N` (N logins, answered with
 * `{"us": CPU µs per login}`), `check` (one login, answered with its attributes), `exit`.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { createInterface } from 'node:readline';
import { compactDecrypt, exportJWK, importJWK } from 'jose';
import * as oidc from 'openid-client';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { IdClient as CurrentClient } from '../src/client/id-client.js';
import { generatePkcePair } from '../src/pkce.js';
import { fapiFloor } from './floor.js';

const REDIRECT_URI = 'https://rp.example/callback';

type Login = () => Promise<Record<string, string>>;

async function main(): Promise<void> {
  const role = env('BENCH_ROLE');
  const origin = env('BENCH_ORIGIN');
  const clientId = env('BENCH_CLIENT_ID');
  const nonce = env('BENCH_NONCE');
  const rpKeyPem = env('BENCH_RP_PRIVATE_KEY');
  const src = process.env.BENCH_SRC;
  const IdClient =
    src === undefined || src === ''
      ? CurrentClient
      : (
          (await import(pathToFileURL(resolve(src, 'src/client/id-client.ts')).href)) as {
            IdClient: typeof CurrentClient;
          }
        ).IdClient;
  const login =
    role === 'openid-client'
      ? await openidClientLogin(origin, clientId, nonce, createPrivateKey(rpKeyPem))
      : role === 'floor'
        ? await floorLogin(IdClient, origin, clientId, nonce, rpKeyPem)
        : oursLogin(IdClient, role, origin, clientId, nonce, rpKeyPem);

  for await (const line of createInterface({ input: process.stdin })) {
    const [command, arg] = line.trim().split(' ');
    if (command === 'exit') break;
    if (command === 'check') {
      reply(await login());
    } else if (command === 'run') {
      const n = Number(arg);
      if (global.gc) global.gc();
      const start = process.cpuUsage();
      for (let i = 0; i < n; i++) await login();
      const used = process.cpuUsage(start);
      reply({ us: (used.user + used.system) / n });
    }
  }
  process.exit(0);
}

function oursLogin(
  IdClient: typeof CurrentClient,
  role: string,
  origin: string,
  clientId: string,
  nonce: string,
  privateKey: string,
): Login {
  if (role === 'ours-base') {
    const base = new IdClient({
      clientId,
      clientSecret: 'bench-secret',
      privateKey,
      redirectUri: REDIRECT_URI,
      hostname: origin,
    });
    return async () => {
      const { codeVerifier, codeChallenge } = generatePkcePair();
      base.authorizationUrl({ codeChallenge, nonce, state: 's' });
      const { sub, accessToken } = await base.callback({ code: 'bench-code', nonce, codeVerifier });
      return (await base.userinfo({ sub, accessToken })).data;
    };
  }
  const fapi = new IdClient({
    clientId,
    privateKey,
    redirectUri: REDIRECT_URI,
    hostname: origin,
    profile: 'fapi2',
    clientAssertionKey: env('BENCH_ASSERTION_KEY'),
    idTokenDecryptionKey: env('BENCH_ID_TOKEN_KEY'),
    authenticationContextMessage: 'Sign in to the bench',
  });
  const iss = fapi.issuer;
  return async () => {
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const { key } = await fapi.dpopKeyForLogin();
    await fapi.pushAuthorizationRequest({ codeChallenge, nonce, state: 's', dpopKey: key });
    const { sub, accessToken } = await fapi.callback({ code: 'bench-code', nonce, codeVerifier, iss, dpopKey: key });
    return (await fapi.userinfo({ sub, accessToken, dpopKey: key })).data;
  };
}

async function openidClientLogin(origin: string, clientId: string, nonce: string, rpKey: KeyObject): Promise<Login> {
  const issuer = `${origin}/v2`;
  const assertion = createPrivateKey(env('BENCH_ASSERTION_KEY'));
  const signing = (await importJWK(await exportJWK(assertion), 'ES256')) as oidc.CryptoKey;
  const config = await oidc.discovery(
    new URL(issuer),
    clientId,
    { token_endpoint_auth_method: 'private_key_jwt', id_token_signed_response_alg: 'PS256' },
    oidc.PrivateKeyJwt({ key: signing, kid: 'bench-assertion' }),
    { execute: [oidc.allowInsecureRequests] },
  );
  const idTokenKey = createPrivateKey(env('BENCH_ID_TOKEN_KEY'));
  const decryption = (await importJWK(await exportJWK(idTokenKey), 'ECDH-ES+A256KW')) as oidc.CryptoKey;
  oidc.enableDecryptingResponses(config, ['A256GCM'], { key: decryption, alg: 'ECDH-ES+A256KW', kid: 'bench-enc' });
  return async () => {
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    await oidc.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile.name',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 's',
        nonce,
        authentication_context_message: 'Sign in to the bench',
      },
      { DPoP },
    );
    // The callback the provider would redirect to (the stub answers the code whatever it is).
    const callback = new URL(`${REDIRECT_URI}?code=bench-code&state=s&iss=${encodeURIComponent(issuer)}`);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: 's', expectedNonce: nonce, idTokenExpected: true },
      undefined,
      { DPoP },
    );
    const info = (await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP })) as unknown as {
      key: string;
      data: Record<string, string>;
    };
    const jwk = JSON.parse(new TextDecoder().decode((await compactDecrypt(info.key, rpKey)).plaintext)) as {
      k: string;
    };
    const blockKey = Buffer.from(jwk.k, 'base64url');
    const out: Record<string, string> = {};
    for (const [name, jwe] of Object.entries(info.data))
      out[name] = new TextDecoder().decode((await compactDecrypt(jwe, blockKey)).plaintext);
    return out;
  };
}

/**
 * The FAPI floor as a login: our base login, then what the profile adds to it at the least, each
 * part by node:crypto or node:http directly (perf/floor.ts) against the FAPI stub.
 */
async function floorLogin(
  IdClient: typeof CurrentClient,
  origin: string,
  clientId: string,
  nonce: string,
  privateKey: string,
): Promise<Login> {
  const base = oursLogin(IdClient, 'ours-base', origin, clientId, nonce, privateKey);
  const fapiOrigin = env('BENCH_FAPI_ORIGIN');
  const tokens = (await (await fetch(`${fapiOrigin}/v2/oauth/token`, { method: 'POST' })).json()) as {
    id_token?: string;
  };
  if (tokens.id_token === undefined) throw new Error('bench worker: the FAPI stub gave no ID token');
  const floor = fapiFloor(fapiOrigin, tokens.id_token, createPrivateKey(env('BENCH_ID_TOKEN_KEY')));
  return async () => {
    const data = await base();
    await floor.login();
    return data;
  };
}

function reply(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench worker: ${name} is not set`);
  return value;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
