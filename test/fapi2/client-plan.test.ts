/**
 * The OpenID Foundation's FAPI 2.0 Security Profile final client test plan
 * (`fapi2-security-profile-final-client-test-plan`; variant private_key_jwt + DPoP + OpenID
 * Connect, unsigned pushed request, plain response): its 22 modules, one test each, named after
 * the module. Each runs an app (NdIdStrategy + ndIdRouter, `profile: 'fapi2'`, configured by
 * `issuer`) against a server that behaves as that module does (`client-plan-server.ts`), over
 * real HTTP with real cookies, and asserts what the module requires: the person ends signed in
 * and the resource endpoint was read, or the app refuses with the error code named and calls
 * nothing further. In every module the client keeps the plan's rules (assertion, proofs, nonces).
 * The plan's server never encrypts ID tokens, so these also prove that a FAPI app that does not
 * ask for encryption signs in with a signed one; the last tests cover the app that does ask.
 * (`conformance.test.ts` is the bundled provider's own plan, which includes such a request.)
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, importJWK, type JWK, type JSONWebKeySet } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { Browser } from '../helpers/harness.js';
import { startPassportApp } from '../helpers/passport-app.js';
import { startModuleServer, type ModuleFault, type ModuleServer } from './client-plan-server.js';

const CLIENT_ID = 'fapi2-client-plan-rp';

/** The app's keys: an EC assertion key, and an EC key for the ID tokens of the app that asks for encryption. */
const keys = {
  assertion: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  idToken: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
};

interface ModuleRun {
  /** The user the app signed in (its `/me`), or undefined. */
  user?: Record<string, unknown>;
  /** The failure code the app showed, or undefined. */
  code?: string;
  server: ModuleServer;
}

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});

/** The app's IdClient options against `issuer`, beyond what a test adds. */
function appOptions(issuer: string, extra: Partial<IdClientOptions>): Partial<IdClientOptions> {
  return {
    clientId: CLIENT_ID,
    issuer,
    allowInsecureHttp: true,
    profile: 'fapi2',
    clientAssertionKey: keys.assertion,
    ...extra,
  };
}

/** Runs one module: the app signs in (or refuses) against a server with `fault`. */
async function runModule(fault: ModuleFault, extra: Partial<IdClientOptions> = {}): Promise<ModuleRun> {
  const app = await startPassportApp();
  running.push(app);
  const redirectUri = app.callbackURL;
  let jwks: JSONWebKeySet = { keys: [] };
  const server = await startModuleServer(() => ({ clientId: CLIENT_ID, redirectUri, jwks }), fault);
  running.push(server);
  const options = appOptions(server.issuer, extra);
  jwks = new IdClient({ ...options, redirectUri } as IdClientOptions).publicJwks() as unknown as JSONWebKeySet;
  app.install(new NdIdStrategy({ ...options, callbackURL: redirectUri, scope: 'openid profile email' } as never));
  return { ...(await walkLogin(app.baseUrl)), server };
}

/** A browser's login at the app: to the server's authorization endpoint, back to the callback, then `/me`. */
async function walkLogin(baseUrl: string): Promise<Omit<ModuleRun, 'server'>> {
  const browser = new Browser(baseUrl);
  const started = await browser.get('/auth/login');
  if (started.status !== 302) return failure(started.text);
  const back = await fetch(started.location ?? '', { redirect: 'manual' });
  const callback = back.headers.get('location');
  if (back.status !== 302 || callback === null) return {};
  const done = await browser.get(callback);
  if (done.status !== 302) return failure(done.text);
  const me = await browser.get('/me');
  return { user: (JSON.parse(me.text) as { user: Record<string, unknown> }).user };
}

function failure(text: string): { code: string } {
  return { code: (JSON.parse(text) as { code: string }).code };
}

/** The module requires a sign-in: the app signed the person in and read the resource endpoint, by the rules. */
async function expectSignIn(fault: ModuleFault = {}, extra: Partial<IdClientOptions> = {}): Promise<ModuleRun> {
  const run = await runModule(fault, extra);
  expect(run.code, `refused with ${run.code}`).toBeUndefined();
  expect(run.user?.sub).toBe('user-subject-1234531');
  expect(run.server.resourceServed()).toBe(true);
  expect(run.server.violations).toEqual([]);
  return run;
}

/** The module requires a refusal: the app shows `code` and calls nothing after the response it refused. */
async function expectRefusal(code: string, fault: ModuleFault): Promise<ModuleRun> {
  const run = await runModule(fault);
  expect(run.user).toBeUndefined();
  expect(run.code).toBe(code);
  expect(run.server.resourceServed()).toBe(false);
  expect(run.server.violations).toEqual([]);
  return run;
}

const stopAtIdToken = (idTokenClaims: ModuleFault['idTokenClaims']): ModuleFault => ({
  idTokenClaims,
  clientMustStopAfter: 'id_token',
});
const stopAtResponse = (authorizationResponse: ModuleFault['authorizationResponse']): ModuleFault => ({
  authorizationResponse,
  clientMustStopAfter: 'authorization_response',
});

describe('FAPI 2.0 Security Profile final client test plan (private_key_jwt, DPoP, OpenID Connect)', () => {
  it('FAPI2SPFinalClientTestHappyPath', async () => {
    const run = await expectSignIn();
    // The server's nonces were demanded and the client retried with them: PAR, token and resource each once.
    expect(run.server.calls.filter((p) => p === '/token')).toHaveLength(2);
    expect(run.server.calls.filter((p) => p === '/userinfo')).toHaveLength(2);
  });

  it('FAPI2SPFinalClientTestDiscoveryIssuerMismatch', async () => {
    const run = await expectRefusal('discovery_issuer_mismatch', {
      discoveryIssuerMismatch: true,
      clientMustStopAfter: 'discovery',
    });
    expect(run.server.calls).not.toContain('/par');
  });

  it('FAPI2SPFinalClientTestInvalidIss', async () => {
    await expectRefusal(
      'id_token_iss_mismatch',
      stopAtIdToken((c) => {
        c.iss = `${String(c.iss)}1`;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidAud', async () => {
    await expectRefusal(
      'id_token_aud_mismatch',
      stopAtIdToken((c) => {
        c.aud = `${String(c.aud)}1`;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidSecondaryAud', async () => {
    // OIDC Core 3.1.3.7: an ID token with several audiences and no azp naming this client is refused.
    await expectRefusal(
      'id_token_azp_mismatch',
      stopAtIdToken((c) => {
        c.aud = [c.aud, `${String(c.aud)}1`];
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidNullAlg', async () => {
    await expectRefusal('id_token_alg_not_allowed', { idTokenSignature: 'none', clientMustStopAfter: 'id_token' });
  });

  it('FAPI2SPFinalClientTestInvalidAlternateAlg', async () => {
    await expectRefusal('id_token_alg_not_allowed', {
      idTokenSignature: 'alternate-rs256',
      clientMustStopAfter: 'id_token',
    });
  });

  it('FAPI2SPFinalClientTestInvalidExpiredExp', async () => {
    await expectRefusal(
      'id_token_expired',
      stopAtIdToken((c) => {
        c.exp = Math.floor(Date.now() / 1000) - 6 * 60;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidMissingExp', async () => {
    await expectRefusal(
      'id_token_claim_missing',
      stopAtIdToken((c) => {
        delete c.exp;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidMissingAud', async () => {
    await expectRefusal(
      'id_token_claim_missing',
      stopAtIdToken((c) => {
        delete c.aud;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidMissingIss', async () => {
    await expectRefusal(
      'id_token_claim_missing',
      stopAtIdToken((c) => {
        delete c.iss;
      }),
    );
  });

  it('FAPI2SPFinalClientTestValidAudAsArray', async () => {
    await expectSignIn({
      idTokenClaims: (c) => {
        c.aud = [c.aud];
      },
    });
  });

  it('FAPI2SPFinalClientTestInvalidNonce', async () => {
    await expectRefusal(
      'nonce_mismatch',
      stopAtIdToken((c) => {
        c.nonce = `${String(c.nonce)}1`;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidMissingNonce', async () => {
    await expectRefusal(
      'nonce_missing',
      stopAtIdToken((c) => {
        // The module is skipped for a client that sends no nonce; this one always sends one.
        expect(c.nonce).toEqual(expect.any(String));
        delete c.nonce;
      }),
    );
  });

  it('FAPI2SPFinalClientTestInvalidAuthorizationResponseIss', async () => {
    const run = await expectRefusal(
      'authorization_response_iss_mismatch',
      stopAtResponse((p, issuer) => p.set('iss', `${issuer}1`)),
    );
    expect(run.server.calls).not.toContain('/token');
  });

  it('FAPI2SPFinalClientTestRemoveAuthorizationResponseIss', async () => {
    const run = await expectRefusal(
      'authorization_response_iss_missing',
      stopAtResponse((p) => p.delete('iss')),
    );
    expect(run.server.calls).not.toContain('/token');
  });

  it('FAPI2SPFinalClientTestEnsureAuthorizationResponseWithInvalidStateFails', async () => {
    const run = await expectRefusal(
      'state_mismatch',
      stopAtResponse((p) => p.set('state', `${p.get('state') ?? ''}1`)),
    );
    expect(run.server.calls).not.toContain('/token');
  });

  it('FAPI2SPFinalClientTestEnsureAuthorizationResponseWithInvalidMissingStateFails', async () => {
    const run = await expectRefusal(
      'state_mismatch',
      stopAtResponse((p) => p.delete('state')),
    );
    expect(run.server.calls).not.toContain('/token');
  });

  it('FAPI2SPFinalClientTestTokenEndpointResponseWithoutExpiresIn', async () => {
    await expectSignIn({
      tokenResponse: (t) => {
        delete t.expires_in;
      },
    });
  });

  it('FAPI2SPFinalClientTestTokenTypeCaseInsenstivity', async () => {
    await expectSignIn({
      tokenResponse: (t) => {
        t.token_type = invertCase(String(t.token_type));
      },
    });
  });

  it('FAPI2SPFinalClientTestRSDpopAuthSchemeCaseInsenstivity', async () => {
    const run = await expectSignIn({ resourceChallengeScheme: 'dPoP' });
    expect(run.server.calls.filter((p) => p === '/userinfo')).toHaveLength(2);
  });

  it('FAPI2SPFinalClientTestHappyPathNoDpopNonce', async () => {
    const run = await expectSignIn({ noDpopNonce: true });
    expect(run.server.calls.filter((p) => p === '/token')).toHaveLength(1);
    expect(run.server.calls.filter((p) => p === '/userinfo')).toHaveLength(1);
  });
});

describe('a FAPI app that registered ID-token encryption (idTokenEncryptedResponseAlg)', () => {
  const asksForEncryption = {
    idTokenDecryptionKey: keys.idToken,
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
  } satisfies Partial<IdClientOptions>;

  it('refuses the plan server’s signed but unencrypted ID token with id_token_not_encrypted, and reads nothing more', async () => {
    const run = await runModule({ clientMustStopAfter: 'id_token' }, asksForEncryption);
    expect(run.code).toBe('id_token_not_encrypted');
    expect(run.server.resourceServed()).toBe(false);
    expect(run.server.violations).toEqual([]);
  });

  it('signs in with an ID token encrypted as registered', async () => {
    await expectSignIn(
      { encryptIdToken: encryptTo(keys.idToken, 'ECDH-ES+A256KW', 'A256CBC-HS512') },
      asksForEncryption,
    );
  });

  it('refuses an ID token encrypted with another content encryption than the registered one: id_token_jwe_alg_not_allowed', async () => {
    const run = await runModule(
      { encryptIdToken: encryptTo(keys.idToken, 'ECDH-ES+A256KW', 'A256GCM'), clientMustStopAfter: 'id_token' },
      { ...asksForEncryption, idTokenEncryptedResponseEnc: 'A256CBC-HS512' },
    );
    expect(run.code).toBe('id_token_jwe_alg_not_allowed');
    expect(run.server.violations).toEqual([]);
  });

  it('an app that did not ask still decrypts an ID token that arrives encrypted', async () => {
    await expectSignIn(
      { encryptIdToken: encryptTo(keys.idToken, 'ECDH-ES+A256KW', 'A256GCM') },
      { idTokenDecryptionKey: keys.idToken },
    );
  });
});

function invertCase(text: string): string {
  return [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

/** Encrypts a signed ID token to the app's public key, as a provider that encrypts does. */
function encryptTo(privateKey: KeyObject, alg: string, enc: string): (signed: string) => Promise<string> {
  return async (signed) => {
    const jwk = privateKey.export({ format: 'jwk' }) as JWK;
    const { d: _private, ...publicJwk } = jwk;
    return new CompactEncrypt(new TextEncoder().encode(signed))
      .setProtectedHeader({ alg, enc, cty: 'JWT' })
      .encrypt(await importJWK(publicJwk, alg));
  };
}
