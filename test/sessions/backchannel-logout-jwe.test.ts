/**
 * Encrypted logout tokens at the back-channel logout route, over real HTTP: the route is
 * unauthenticated, so a token is decrypted only under the app's ID-token encryption allowlist
 * (`idTokenEncryptedResponseAlg`/`Enc`) and only with the key its `kid` names (with no `kid`, the
 * only key that fits): a `kid` that names no key, or none while several keys fit, costs no
 * decryption at all. The app's keys are decrypters held elsewhere (an HSM or a KMS), counted.
 */
import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { calculateJwkThumbprint, CompactEncrypt, exportJWK, SignJWT, type JWK } from 'jose';
import passport from 'passport';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EphemeralPublicJwk, JweDecrypter } from '../../src/client.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/client/logout-token.js';
import { IdClient } from '../../src/client/id-client.js';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { providerPem } from './logout-tokens.js';

const CLIENT_ID = 'bcl-jwe-app';
/** Every deriveSharedSecret call of the app's decrypters. */
let decryptions = 0;

/** An EC P-256 decrypter whose private key the test holds, as an HSM would, counting each use. */
function countingDecrypter(kid: string): { decrypter: JweDecrypter; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = { ...(publicKey.export({ format: 'jwk' }) as { kty: string; x: string; y: string }), kid };
  const decrypter: JweDecrypter = {
    publicJwk,
    async deriveSharedSecret(epk: EphemeralPublicJwk) {
      decryptions += 1;
      const theirs = createPublicKey({ key: { ...epk }, format: 'jwk' });
      return new Uint8Array(diffieHellman({ privateKey, publicKey: theirs }));
    },
  };
  return { decrypter, publicKey };
}

const first = countingDecrypter('enc-1');
const second = countingDecrypter('enc-2');
const signingKey = providerPem;
let provider: { url: string; server: Server };
let app: { url: string; server: Server };

/** A provider of discovery and keys only: it signs its tokens with PS256. */
async function startKeysProvider(): Promise<{ url: string; server: Server }> {
  const publicJwk: JWK = await exportJWK(createPublicKey(signingKey));
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const server = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const body =
      req.url === '/.well-known/openid-configuration'
        ? {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            pushed_authorization_request_endpoint: `${issuer}/par`,
            jwks_uri: `${issuer}/jwks`,
            id_token_signing_alg_values_supported: ['PS256'],
          }
        : req.url === '/jwks'
          ? { keys: [{ ...publicJwk, kid, use: 'sig', alg: 'PS256' }] }
          : undefined;
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  provider = await startKeysProvider();
  const client = new IdClient({
    clientId: CLIENT_ID,
    issuer: provider.url,
    redirectUri: 'http://127.0.0.1:9/auth/callback',
    profile: 'fapi2',
    clientAssertionKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    idTokenDecryptionKey: [first.decrypter, second.decrypter],
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
    idTokenEncryptedResponseEnc: 'A256GCM',
  });
  const sessions = createSessionPolicy();
  const backchannelLogout = createBackchannelLogout({ client, sessions, replayStore: createMemoryReplayStore() });
  const web = express();
  web.use('/auth', ndIdRouter({ passport: new passport.Passport(), sessions, backchannelLogout }));
  const server = web.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  app = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
});

afterAll(async () => {
  for (const { server } of [app, provider]) {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
});

beforeEach(() => {
  decryptions = 0;
});

/** A logout token of the provider, signed (PS256) then encrypted to `to` with the header given. */
async function encryptedToken(to: KeyObject, header: { alg: string; enc: string; kid?: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const publicJwk = await exportJWK(createPublicKey(signingKey));
  const signed = await new SignJWT({
    iss: provider.url,
    aud: CLIENT_ID,
    iat: now,
    exp: now + 120,
    jti: randomUUID(),
    sub: 'person-1',
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  })
    .setProtectedHeader({ alg: 'PS256', typ: 'logout+jwt', kid: await calculateJwkThumbprint(publicJwk, 'sha256') })
    .sign(createPrivateKey(signingKey));
  return new CompactEncrypt(new TextEncoder().encode(signed)).setProtectedHeader({ ...header, cty: 'JWT' }).encrypt(to);
}

function post(token: string): Promise<Response> {
  return fetch(`${app.url}/auth/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }).toString(),
  });
}

async function expectRefused(res: Response, code: string): Promise<void> {
  expect(res.status, code).toBe(400);
  expect(((await res.json()) as { code: string }).code).toBe(code);
}

describe('an encrypted logout token at the back-channel logout route', () => {
  it('is taken under the app allowlist, decrypted once with the key its kid names', async () => {
    const res = await post(
      await encryptedToken(second.publicKey, { alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: 'enc-2' }),
    );
    expect(res.status).toBe(200);
    expect(decryptions).toBe(1);
  });

  it.each([
    ['a key-management algorithm outside the allowlist (ECDH-ES)', { alg: 'ECDH-ES', enc: 'A256GCM', kid: 'enc-1' }],
    ['a content encryption outside the allowlist (A128GCM)', { alg: 'ECDH-ES+A256KW', enc: 'A128GCM', kid: 'enc-1' }],
  ])('refuses %s: logout_token_alg_not_allowed, before any decryption', async (_what, header) => {
    await expectRefused(await post(await encryptedToken(first.publicKey, header)), 'logout_token_alg_not_allowed');
    expect(decryptions).toBe(0);
  });

  it('refuses a kid that names no key of the app without trying any: logout_token_malformed', async () => {
    const token = await encryptedToken(first.publicKey, { alg: 'ECDH-ES+A256KW', enc: 'A256GCM', kid: 'no-such-key' });
    await expectRefused(await post(token), 'logout_token_malformed');
    expect(decryptions).toBe(0);
  });

  it('refuses a token without a kid while two keys fit, without trying either: logout_token_malformed', async () => {
    const token = await encryptedToken(first.publicKey, { alg: 'ECDH-ES+A256KW', enc: 'A256GCM' });
    await expectRefused(await post(token), 'logout_token_malformed');
    expect(decryptions).toBe(0);
  });
});
