/**
 * The FAPI 2.0 options of {@link IdClient}, checked once at construction, and the app's public
 * key set built from them (for registration by `jwks_uri`).
 */
import { contextMessageProblem, MAX_CONTEXT_MESSAGE_LENGTH } from '../context-message.js';
import { createPublicKey, type KeyObject, type JsonWebKey } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { DecryptionKey } from '../keys.js';
import { checkContextType } from './client-options.js';
import { ID_TOKEN_JWE_ALGORITHMS, ID_TOKEN_JWE_ENCRYPTION, type IdTokenDecryptionOptions } from './id-token-jwe.js';
import {
  importIdTokenDecryptionKeys,
  importInMemorySigningKeys,
  importSigningKeys,
  publicJwk,
  type IdTokenDecryptionKey,
  type PublicJwk,
  type SigningKey,
} from './fapi-keys.js';
import type { IdClientOptions, RetiredPublicKey } from './types.js';
import { isSignerReference } from '../jose/key-reference.js';

export { MAX_CONTEXT_MESSAGE_LENGTH };

// Declared with the options (types.ts) so that file needs nothing from this one.
export type { IdClientProfile, RetiredPublicKey } from './types.js';

/** The FAPI 2.0 options as given (declared, with their documentation, in {@link IdClientOptions}). */
export type FapiOptionsInput = Pick<
  IdClientOptions,
  | 'clientAssertionKey'
  | 'idTokenDecryptionKey'
  | 'idTokenEncryptedResponseAlg'
  | 'idTokenEncryptedResponseEnc'
  | 'dpopKey'
  | 'authenticationContextMessage'
  | 'authenticationContextType'
  | 'retiredPublicKeys'
>;

/** The FAPI 2.0 configuration, imported. */
export interface FapiConfig {
  signingKeys: SigningKey[];
  decryptionKeys: IdTokenDecryptionKey[];
  /**
   * The encryption the app registered, when it gave `idTokenEncryptedResponseAlg`: every ID
   * token must then arrive encrypted, with these algorithms. Undefined: a signed ID token is
   * accepted, and an encrypted one decrypted with any algorithm accepted.
   */
  idTokenEncryption: Required<IdTokenDecryptionOptions> | undefined;
  /** One key for every login of this instance, or undefined for a key pair per login (the default). */
  instanceDpopKey: KeyObject | undefined;
  contextMessage: string | undefined;
  /** `authentication_context_type` sent with every login that gives none. */
  contextType: string | undefined;
  retired: { jwk: PublicJwk; until: number }[];
}

/**
 * Checks the FAPI 2.0 options. With `profile: 'base'` none of them may be given (they would be
 * silently unused); with `'fapi2'` the assertion key is required, the ID-token key defaults to
 * the userinfo `privateKey` (RSA-OAEP-256), and ID tokens must arrive encrypted only when
 * `idTokenEncryptedResponseAlg` is given.
 * @throws TypeError naming the option and saying what to do.
 */
export function parseFapiOptions(
  profile: unknown,
  options: FapiOptionsInput,
  userinfoKeys: readonly DecryptionKey[],
): FapiConfig | undefined {
  if (profile !== undefined && profile !== 'base' && profile !== 'fapi2') {
    throw new TypeError(
      "IdClient: profile must be 'base' (the default: the service as its spec describes it) or 'fapi2' (the FAPI 2.0 Security Profile)",
    );
  }
  if (profile !== 'fapi2') {
    for (const name of [
      'clientAssertionKey',
      'idTokenDecryptionKey',
      'idTokenEncryptedResponseAlg',
      'idTokenEncryptedResponseEnc',
      'dpopKey',
      'retiredPublicKeys',
      'authenticationContextType',
    ] as const) {
      if (options[name] !== undefined)
        throw new TypeError(
          `IdClient: ${name} is used only with profile: 'fapi2'; add profile: 'fapi2' or remove ${name}`,
        );
    }
    return undefined;
  }
  const signingKeys = importSigningKeys(options.clientAssertionKey, 'IdClient: clientAssertionKey');
  const decryptionKeys =
    options.idTokenDecryptionKey === undefined
      ? userinfoKeys.length === 0
        ? []
        : importIdTokenDecryptionKeys(
            userinfoKeys.map((k) => k.remote ?? k.key),
            'IdClient: privateKey (used as idTokenDecryptionKey)',
          )
      : importIdTokenDecryptionKeys(options.idTokenDecryptionKey, 'IdClient: idTokenDecryptionKey');
  const idTokenEncryption = parseIdTokenEncryption(options, decryptionKeys);
  for (const key of signingKeys) {
    if (decryptionKeys.some((d) => d.kid === key.kid)) {
      throw new TypeError(
        'IdClient: clientAssertionKey and idTokenDecryptionKey are the same key (same kid); give each purpose its own key',
      );
    }
  }
  let instanceDpopKey: KeyObject | undefined;
  if (options.dpopKey !== undefined && options.dpopKey !== 'per-login') {
    if (isSignerReference(options.dpopKey))
      throw new TypeError(
        "IdClient: dpopKey must be an EC P-256 private key held in memory, or 'per-login' (the default, a fresh key per login); a signer is taken for clientAssertionKey only",
      );
    const [imported] = importInMemorySigningKeys(options.dpopKey, 'IdClient: dpopKey');
    if (imported === undefined || imported.alg !== 'ES256')
      throw new TypeError("IdClient: dpopKey must be an EC P-256 private key (ES256), or 'per-login'");
    instanceDpopKey = imported.key;
  }
  const contextMessage =
    options.authenticationContextMessage === undefined
      ? undefined
      : checkContextMessage(options.authenticationContextMessage, 'IdClient: authenticationContextMessage');
  const contextType =
    options.authenticationContextType === undefined
      ? undefined
      : checkContextType(options.authenticationContextType, 'IdClient: authenticationContextType');
  return {
    signingKeys,
    decryptionKeys,
    idTokenEncryption,
    instanceDpopKey,
    contextMessage,
    contextType,
    retired: parseRetired(options.retiredPublicKeys),
  };
}

/**
 * The ID-token encryption the app asks for by naming the algorithm it registered
 * (`idTokenEncryptedResponseAlg`, and optionally `idTokenEncryptedResponseEnc`), with a key
 * of the kind that algorithm decrypts with; undefined when it names none.
 * @throws TypeError naming the option and saying what to do.
 */
function parseIdTokenEncryption(
  options: FapiOptionsInput,
  keys: readonly IdTokenDecryptionKey[],
): Required<IdTokenDecryptionOptions> | undefined {
  const { idTokenEncryptedResponseAlg: alg, idTokenEncryptedResponseEnc: enc } = options;
  if (alg === undefined) {
    if (enc !== undefined)
      throw new TypeError(
        'IdClient: idTokenEncryptedResponseEnc is only used beside idTokenEncryptedResponseAlg; give the algorithm registered for ID-token encryption too, or remove it',
      );
    return undefined;
  }
  if (typeof alg !== 'string' || !ID_TOKEN_JWE_ALGORITHMS.includes(alg))
    throw new TypeError(`IdClient: idTokenEncryptedResponseAlg must be one of ${ID_TOKEN_JWE_ALGORITHMS.join(', ')}`);
  if (enc !== undefined && (typeof enc !== 'string' || !ID_TOKEN_JWE_ENCRYPTION.includes(enc)))
    throw new TypeError(
      `IdClient: idTokenEncryptedResponseEnc must be one of ${ID_TOKEN_JWE_ENCRYPTION.join(', ')}, or left out (any of them)`,
    );
  const kind = alg === 'RSA-OAEP-256' ? 'rsa' : 'ec';
  if (!keys.some((k) => k.key.asymmetricKeyType === kind)) {
    throw new TypeError(
      `IdClient: idTokenEncryptedResponseAlg ${alg} needs ${kind === 'ec' ? 'an EC' : 'an RSA'} private key to decrypt ID tokens with: give it as idTokenDecryptionKey${kind === 'rsa' ? ' (or privateKey)' : ''} (see docs/fapi2.md)`,
    );
  }
  return { algorithms: [alg], encryptions: enc === undefined ? [...ID_TOKEN_JWE_ENCRYPTION] : [enc] };
}

/**
 * `message` when it is 1 to 100 characters with no control characters.
 * @throws TypeError naming `what`.
 */
export function checkContextMessage(message: unknown, what: string): string {
  if (typeof message !== 'string')
    throw new TypeError(`${what} must be a string of at most ${MAX_CONTEXT_MESSAGE_LENGTH} characters`);
  const problem = contextMessageProblem(message);
  if (problem !== undefined) throw new TypeError(`${what} ${problem}`);
  return message;
}

function parseRetired(value: unknown): { jwk: PublicJwk; until: number }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new TypeError('IdClient: retiredPublicKeys must be an array of { publicKey, use, until }');
  return value.map((entry: unknown, i) => {
    const what = `IdClient: retiredPublicKeys[${i}]`;
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Partial<RetiredPublicKey>;
    if ((e.use as string) === 'enc') {
      throw new TypeError(
        `${what}: a retired ID-token key is not published, since the service would encrypt ID tokens to a key this app no longer holds; ` +
          'keep the old private key in the idTokenDecryptionKey list, after the new one, until the service has fetched the new set, then drop it',
      );
    }
    if (e.use !== 'sig') throw new TypeError(`${what}.use must be 'sig' (a retired client-assertion key)`);
    const until =
      e.until instanceof Date ? e.until.getTime() : typeof e.until === 'string' ? Date.parse(e.until) : e.until;
    if (typeof until !== 'number' || !Number.isFinite(until))
      throw new TypeError(`${what}.until must be a Date, an ISO 8601 date or ms since the epoch`);
    const key = importPublic(e.publicKey, `${what}.publicKey`);
    const alg = algorithmFor(key, e.use);
    const kid =
      typeof e.publicKey === 'object' && e.publicKey !== null && typeof e.publicKey.kid === 'string'
        ? e.publicKey.kid
        : undefined;
    return { jwk: publicJwk(key, kid, e.use, alg), until };
  });
}

function importPublic(value: unknown, what: string): KeyObject {
  if (typeof value === 'string') {
    if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(value))
      throw new TypeError(
        `${what} is a private key; a retired key is published, so give its public part (-----BEGIN PUBLIC KEY-----)`,
      );
    try {
      return createPublicKey({ key: value.trim().replace(/\\n/g, '\n'), format: 'pem' });
    } catch {
      throw new TypeError(`${what} must be a PEM public key (-----BEGIN PUBLIC KEY-----) or a public JWK`);
    }
  }
  if (typeof value === 'object' && value !== null) {
    const jwk = value as Record<string, unknown>;
    if (jwk.d !== undefined || jwk.k !== undefined) {
      throw new TypeError(
        `${what} is a private or symmetric JWK; a retired key is published, so give its public part only (no "d" or "k")`,
      );
    }
    try {
      return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw new TypeError(`${what} is not a readable public JWK`);
    }
  }
  throw new TypeError(`${what} must be a PEM public key or a public JWK`);
}

function algorithmFor(key: KeyObject, use: 'sig' | 'enc'): string {
  const type = key.asymmetricKeyType;
  if (use === 'sig') return type === 'ec' ? 'ES256' : type === 'rsa' ? 'PS256' : 'EdDSA';
  return type === 'ec' ? 'ECDH-ES+A256KW' : 'RSA-OAEP-256';
}

/** A JSON Web Key Set of public keys only. */
export interface PublicJwks {
  keys: PublicJwk[];
}

/**
 * The app's public keys: every assertion key (`sig`), every ID-token decryption key (`enc`, the
 * current one first: a service encrypts to the first that fits), and the retired assertion keys
 * whose `until` has not passed. Never a private member.
 */
export function appJwks(config: FapiConfig, clock: Clock): PublicJwks {
  const now = clock();
  return {
    keys: [
      ...config.signingKeys.map((k) => ({ ...k.publicJwk })),
      ...config.decryptionKeys.map((k) => ({ ...k.publicJwk })),
      ...config.retired.filter((r) => r.until >= now).map((r) => ({ ...r.jwk })),
    ],
  };
}
