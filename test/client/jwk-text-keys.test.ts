/**
 * Keys given as JWK JSON text (a string starting with `{`, as an environment variable holds one):
 * accepted by every IdClient key option that takes PEM text, including the JWKs that
 * `nd-id-provider init --profile fapi2` writes, proven by a FAPI login over real HTTP against the
 * bundled provider; and refused at construction, naming the option, when the text is not a
 * private JWK.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { idClientFapiLogin } from '../fapi2/harness.js';
import { testKeyPair } from '../helpers/keys.js';
import { initFapiProvider, type FapiInit } from '../helpers/fapi-init.js';
import type { StartedProvider } from '../helpers/provider.js';

const CALLBACK = 'http://127.0.0.1:3000/auth/callback';
const CLIENT_ID = 'jwk-text-app';

let init: FapiInit;
let provider: StartedProvider;
/** The environment an app would read its keys from: every key as JWK JSON text. */
let env: Record<string, string>;

function jwkText(key: ReturnType<typeof createPrivateKey>): string {
  return JSON.stringify(key.export({ format: 'jwk' }));
}

beforeAll(async () => {
  init = await initFapiProvider(CLIENT_ID, CALLBACK);
  provider = init.provider;
  env = {
    // What an operator pastes into the environment: the JWK file's entries as one line of JSON each,
    // indented text for the RSA key (the PEM init wrote, as a JWK), with a retired key listed first.
    ND_ID_PRIVATE_KEY: `  ${JSON.stringify(createPrivateKey(init.rsaPem).export({ format: 'jwk' }), null, 2)}`,
    ND_ID_RETIRED_PRIVATE_KEY: jwkText(createPrivateKey(testKeyPair('jwk-text-retired').privateKeyPem)),
    ND_ID_CLIENT_ASSERTION_KEY: JSON.stringify(init.sig),
    ND_ID_ID_TOKEN_KEY: JSON.stringify(init.enc),
    ND_ID_DPOP_KEY: jwkText(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
  };
});
afterAll(async () => {
  await init?.close();
});

function options(extra: Partial<IdClientOptions> = {}): IdClientOptions {
  return {
    clientId: CLIENT_ID,
    hostname: provider.baseUrl,
    redirectUri: CALLBACK,
    profile: 'fapi2',
    privateKey: [env.ND_ID_RETIRED_PRIVATE_KEY!, env.ND_ID_PRIVATE_KEY!],
    clientAssertionKey: env.ND_ID_CLIENT_ASSERTION_KEY,
    idTokenDecryptionKey: env.ND_ID_ID_TOKEN_KEY,
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
    dpopKey: env.ND_ID_DPOP_KEY,
    ...extra,
  } as IdClientOptions;
}

describe('keys given as JWK JSON text', () => {
  it('sign in over HTTP with the JWKs init --profile fapi2 wrote, read from environment strings', async () => {
    const client = new IdClient(options());
    try {
      // The published keys are the ones init registered, kid for kid.
      const kids = client.publicJwks().keys.map((k) => k.kid);
      expect(kids).toEqual(expect.arrayContaining(init.registeredKids));
      // An encrypted ID token (to the init enc key), a client assertion (the init sig key), the
      // DPoP key from the environment, and userinfo decrypted with the rotation list's current key.
      const { tokens, dpopKey } = await idClientFapiLogin(client, 'state-jwk-text');
      expect(tokens.tokenType?.toLowerCase()).toBe('dpop');
      expect(dpopKey.publicJwk).toMatchObject({
        kty: 'EC',
        x: (JSON.parse(env.ND_ID_DPOP_KEY!) as { x: string }).x,
      });
      const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken, dpopKey });
      expect(info.data['profile.name']).toBe(provider.provider.personas[0]!['profile.name']);
    } finally {
      client.close();
    }
  });

  const options_ = ['privateKey', 'clientAssertionKey', 'idTokenDecryptionKey', 'dpopKey'] as const;

  it.each(options_)('refuses malformed JSON text for %s at construction, naming it, without echoing it', (name) => {
    const given = env[keyVariable(name)]!;
    const broken = given.slice(0, -1); // the closing brace lost, as a truncated paste would
    const value = name === 'privateKey' ? [env.ND_ID_RETIRED_PRIVATE_KEY!, broken] : broken;
    const where = name === 'privateKey' ? 'IdClient: privateKey[1]' : `IdClient: ${name}`;
    const error = construct({ [name]: value });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain(`${where} starts with "{" but is not valid JSON`);
    expect(error.message).toMatch(/give the private JWK as one JSON object/);
    expectNoKeyText(error.message, given);
  });

  it.each(options_)('refuses a public JWK as JSON text for %s at construction, asking for the private one', (name) => {
    const given = env[keyVariable(name)]!;
    const { d: _d, ...publicPart } = JSON.parse(given) as Record<string, unknown>;
    const error = construct({ [name]: JSON.stringify(publicPart) });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain(`IdClient: ${name}`);
    expect(error.message).toMatch(/JWK without .*private/);
    expectNoKeyText(error.message, given);
  });
});

function keyVariable(name: string): string {
  return {
    privateKey: 'ND_ID_PRIVATE_KEY',
    clientAssertionKey: 'ND_ID_CLIENT_ASSERTION_KEY',
    idTokenDecryptionKey: 'ND_ID_ID_TOKEN_KEY',
    dpopKey: 'ND_ID_DPOP_KEY',
  }[name]!;
}

function construct(extra: Partial<IdClientOptions>): Error {
  try {
    new IdClient(options(extra)).close();
  } catch (err) {
    return err as Error;
  }
  throw new Error('IdClient accepted the key');
}

/** No member value of the key (private or public) appears in the message. */
function expectNoKeyText(message: string, jwkText: string): void {
  const jwk = JSON.parse(jwkText) as Record<string, unknown>;
  for (const [member, value] of Object.entries(jwk)) {
    if (typeof value === 'string' && value.length > 12) expect(message, member).not.toContain(value);
  }
  expect(message).not.toContain('"kty"');
}
