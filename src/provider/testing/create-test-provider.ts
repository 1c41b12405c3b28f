/**
 * One-line test setup: a provider on a free loopback port with one registered client. Its RSA key
 * pair is made once per process (generation is slow) unless a fresh one is asked for.
 */
import { checkOptionNames, ownOptions } from '../../options-check.js';
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { generateRsaKeyPair } from '../crypto.js';
import type { Provider } from '../provider.js';
import type { IdTokenEncryptionAlg, IdTokenEncryptionEnc } from '../fapi/registration.js';
import type { ProviderClient, ProviderOptions } from '../types.js';

/** The registered client, ready to spread into `new IdClient({ ...client, hostname: baseUrl })`. */
export interface TestClient {
  clientId: string;
  clientSecret: string;
  /** The client's RSA private key, PKCS#8 PEM. */
  privateKey: string;
  /** The registered callback URL (the strategy's `callbackURL`). */
  redirectUri: string;
  /** The keys of a `profile: 'fapi2'` client (its `clientSecret` is then ''; it has none). */
  fapi?: TestFapiKeys;
}

/** The keys of a FAPI 2.0 test client, made fresh per provider. */
export interface TestFapiKeys {
  /** The ES256 private signing key (JWK with `kid`, `alg`, `use: 'sig'`): for private_key_jwt. */
  signingKey: JWK;
  /** The private key ID tokens are encrypted to (JWK with `kid`, `alg`, `use: 'enc'`). */
  encryptionKey: JWK;
  /** The public JWKS registered for the client (both keys, public members only). */
  jwks: { keys: JWK[] };
}

/** Options of `createTestProvider`: the provider's own options (but `clients` and `baseUrl`), and the client's. */
export interface TestProviderOptions extends Omit<ProviderOptions, 'clients' | 'baseUrl'> {
  /** The client's registered callback URL. Default `http://127.0.0.1:3000/auth/callback`. */
  redirectUri?: string;
  /** Default `'test-client'`. */
  clientId?: string;
  /** Default: random. */
  clientSecret?: string;
  /** Name shown on the phone page. Default `'Test app'`. */
  clientName?: string;
  /** Generate a key pair for this provider only, instead of the one shared in this process. Default false. */
  freshKeys?: boolean;
  /** Port to listen on (loopback). Default 0, any free port. */
  port?: number;
  /** `'fapi2'`: register the client in the FAPI 2.0 profile, with fresh keys (see {@link TestFapiKeys}). */
  profile?: 'fapi2';
  /** The ID-token encryption of a fapi2 client. Default `'ECDH-ES+A256KW'`. */
  idTokenEncryptedResponseAlg?: IdTokenEncryptionAlg;
  /** The ID-token content encryption of a fapi2 client. Default `'A256GCM'`. */
  idTokenEncryptedResponseEnc?: IdTokenEncryptionEnc;
  /** The ID-token signature of a fapi2 client (see `ProviderClient.idTokenSignedResponseAlg`). */
  idTokenSignedResponseAlg?: ProviderClient['idTokenSignedResponseAlg'];
  /** `false`: the client is registered with `userinfo: false` (sign-in from the ID token alone). */
  clientUserinfo?: boolean;
  /** Where the client takes logout tokens when `provider.signOut()` ends its sessions (see `ProviderClient.backchannelLogoutUri`). */
  backchannelLogoutUri?: string;
}

async function keyWithKid(alg: string, use: 'sig' | 'enc'): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const pair = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RSA-OAEP-256' ? { modulusLength: 2048 } : {}),
  });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    privateJwk: { ...(await exportJWK(pair.privateKey)), kid, alg, use },
    publicJwk: { ...publicJwk, kid, alg, use },
  };
}

/** Fresh keys of a FAPI 2.0 test client: an ES256 signing key and an encryption key for `encAlg`. */
export async function fapiTestKeys(encAlg: IdTokenEncryptionAlg = 'ECDH-ES+A256KW'): Promise<TestFapiKeys> {
  const sig = await keyWithKid('ES256', 'sig');
  const enc = await keyWithKid(encAlg, 'enc');
  return { signingKey: sig.privateJwk, encryptionKey: enc.privateJwk, jwks: { keys: [sig.publicJwk, enc.publicJwk] } };
}

/** What `createTestProvider` resolves to. */
export interface TestProvider {
  provider: Provider;
  /** The provider's origin: the `hostname` of the relying party. */
  baseUrl: string;
  client: TestClient;
  /** Stop the provider. */
  close(): Promise<void>;
}

/** What this module needs of `startProvider` (given by the index, so there is no import cycle). */
export type StartFn = (options: Omit<ProviderOptions, 'baseUrl'> & { port?: number; host?: string }) => Promise<{
  provider: Provider;
  baseUrl: string;
  close(): Promise<void>;
}>;

let shared: Promise<{ privateKey: string; publicKey: string }> | undefined;

async function keyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await generateRsaKeyPair();
  return {
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** `createTestProvider` over a given `startProvider`. */
export async function createTestProviderWith(start: StartFn, options: TestProviderOptions = {}): Promise<TestProvider> {
  checkOptionNames(options, 'createTestProvider()');
  options = ownOptions(options);
  const {
    redirectUri,
    clientId,
    clientSecret,
    clientName,
    freshKeys,
    port,
    profile,
    idTokenEncryptedResponseAlg,
    idTokenEncryptedResponseEnc,
    idTokenSignedResponseAlg,
    clientUserinfo,
    backchannelLogoutUri,
    ...providerOptions
  } = options;
  if (freshKeys !== undefined && typeof freshKeys !== 'boolean')
    throw new TypeError('createTestProvider: freshKeys must be true or false.');
  const keys = freshKeys === true ? await keyPair() : await (shared ??= keyPair());
  const encAlg = idTokenEncryptedResponseAlg ?? 'ECDH-ES+A256KW';
  const fapi = profile === 'fapi2' ? await fapiTestKeys(encAlg) : undefined;
  const client: ProviderClient = {
    clientId: clientId ?? 'test-client',
    ...(fapi === undefined ? { clientSecret: clientSecret ?? randomBytes(24).toString('base64url') } : {}),
    redirectUris: [redirectUri ?? 'http://127.0.0.1:3000/auth/callback'],
    publicKey: keys.publicKey,
    name: clientName ?? 'Test app',
    ...(clientUserinfo === false ? { userinfo: false } : {}),
    ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }),
    ...(fapi === undefined
      ? {}
      : {
          profile: 'fapi2' as const,
          jwks: fapi.jwks,
          idTokenEncryptedResponseAlg: encAlg,
          idTokenEncryptedResponseEnc: idTokenEncryptedResponseEnc ?? 'A256GCM',
          ...(idTokenSignedResponseAlg === undefined ? {} : { idTokenSignedResponseAlg }),
        }),
  };
  const started = await start({ ...providerOptions, clients: [client], host: '127.0.0.1', port: port ?? 0 });
  return {
    provider: started.provider,
    baseUrl: started.baseUrl,
    client: {
      clientId: client.clientId,
      clientSecret: client.clientSecret ?? '',
      privateKey: keys.privateKey,
      redirectUri: client.redirectUris[0]!,
      ...(fapi === undefined ? {} : { fapi }),
    },
    close: () => started.close(),
  };
}
