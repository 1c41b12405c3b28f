/**
 * The provider's cryptography: ID-token signing keys (with rotation), pairwise subjects, userinfo
 * encryption, constant-time comparison. The per-login ID-token signature and userinfo JWEs are
 * written here on node:crypto, synchronously: they are short and fully specified (RFC 7515,
 * RFC 7516), and `jose` runs RSA signing on the thread pool, whose hand-off cost more than the
 * signature (docs/internals.md). The interop tests check the output with other libraries.
 */
import {
  constants,
  createCipheriv,
  createHash,
  createHmac,
  createPublicKey,
  generateKeyPair,
  publicEncrypt,
  sign as signWith,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, exportJWK, type JWTPayload } from 'jose';
import type { Clock } from '../clock.js';
import { base64url } from '../encoding.js';
import { pooledRandomBytes } from './random-pool.js';
import { derToJose } from '../jose/ecdsa.js';

/** The algorithms the provider signs ID tokens with: RS256 (spec 2.1), and the FAPI 2.0 ones (FAPI 2.0 section 5.4.1). */
export const ID_TOKEN_SIGNING_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
/** An algorithm the provider signs ID tokens with. */
export type IdTokenSigningAlg = (typeof ID_TOKEN_SIGNING_ALGS)[number];

/** The RS256 key's entry of the JWKS (spec 2.6): exactly these fields. */
export interface RsaJwksEntry {
  kty: 'RSA';
  kid: string;
  n: string;
  e: string;
  use: 'sig';
  /** Only on the PS256 key: the RS256 key keeps the five fields of spec 2.6. */
  alg?: 'PS256';
}

/** The entry of an ES256 (EC P-256) or EdDSA (OKP Ed25519) key, with its `alg`. */
export interface CurveJwksEntry {
  kty: 'EC' | 'OKP';
  crv: 'P-256' | 'Ed25519';
  kid: string;
  x: string;
  y?: string;
  use: 'sig';
  alg: 'ES256' | 'EdDSA';
}

/** One entry of the JWKS. */
export type JwksEntry = RsaJwksEntry | CurveJwksEntry;

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: JwksEntry;
  /** When this key stops being published (ms), once it has been rotated out. */
  retireAt?: number;
}

async function prepareKey(privateKey: KeyObject, alg: IdTokenSigningAlg): Promise<SigningKey> {
  const exported = await exportJWK(privateKey);
  if (alg === 'RS256' || alg === 'PS256') {
    const { n, e } = exported;
    if (typeof n !== 'string' || typeof e !== 'string') throw new Error('signing key has no RSA modulus or exponent');
    const kid = await calculateJwkThumbprint({ kty: 'RSA', n, e }, 'sha256');
    return { kid, privateKey, jwk: { kty: 'RSA', kid, n, e, use: 'sig', ...(alg === 'PS256' ? { alg } : {}) } };
  }
  const { x, y } = exported;
  if (typeof x !== 'string') throw new Error('signing key has no public point');
  const base =
    alg === 'ES256'
      ? { kty: 'EC' as const, crv: 'P-256' as const, x, y: String(y) }
      : { kty: 'OKP' as const, crv: 'Ed25519' as const, x };
  const kid = await calculateJwkThumbprint(base, 'sha256');
  return { kid, privateKey, jwk: { ...base, kid, use: 'sig', alg } };
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** A fresh RSA-2048 key pair, generated off the event loop so the provider keeps answering. */
export async function generateRsaKeyPair(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return generateKeyPairAsync('rsa', { modulusLength: 2048 });
}

/** A fresh private key for `alg`: RSA-2048, EC P-256 or Ed25519. */
export async function generateSigningKey(alg: IdTokenSigningAlg): Promise<KeyObject> {
  if (alg === 'ES256') return (await generateKeyPairAsync('ec', { namedCurve: 'P-256' })).privateKey;
  if (alg === 'EdDSA') return (await generateKeyPairAsync('ed25519')).privateKey;
  return (await generateRsaKeyPair()).privateKey;
}

/** The JWS signature of `input` under `alg` with `key` (RFC 7518 3.3, 3.4, 3.5; RFC 8037 3.1). */
function jwsSignature(alg: IdTokenSigningAlg, input: string, key: KeyObject): Buffer {
  const data = Buffer.from(input, 'ascii');
  switch (alg) {
    case 'RS256':
      return signWith('sha256', data, key);
    case 'PS256':
      return signWith('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
    case 'ES256':
      return derToJose(signWith('sha256', data, key), 32);
    case 'EdDSA':
      return signWith(null, data, key);
  }
}

/** A compact JWS of JWT `claims`, `typ: "JWT"` (or `typ`), with `kid`. */
function compactJwt(alg: IdTokenSigningAlg, key: SigningKey, claims: JWTPayload, typ = 'JWT'): string {
  const signingInput = `${base64url(JSON.stringify({ alg, typ, kid: key.kid }))}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${jwsSignature(alg, signingInput, key.privateKey).toString('base64url')}`;
}

/** The current key of one algorithm, and its rotated-out keys during their grace period. */
interface Slot {
  current: Promise<SigningKey>;
  retired: SigningKey[];
}

/** The ID tokens of one algorithm, signed with its current key (for the conformance plan and the faults). */
export interface IdTokenSigner {
  readonly alg: IdTokenSigningAlg;
  /** Sign JWT claims with the current key of this algorithm and its `kid`. */
  sign(claims: JWTPayload): Promise<string>;
  /**
   * Signs with a published key under an algorithm the client did not register, so the signature
   * verifies (PS256 with the RS256 key, RS256 with the PS256 key, RS256 for ES256 and EdDSA
   * clients): the conformance plan's `alternate_alg` case.
   */
  signAlternate(claims: JWTPayload): Promise<string>;
  /** The current public key of this algorithm as SPKI PEM, with its kid (what anyone can take from the JWKS). */
  publicKeyPem(): Promise<{ pem: string; kid: string }>;
  /** Rotate every signing key (see {@link SigningKeys.rotate}). */
  rotate(): Promise<void>;
}

/**
 * One current key per algorithm in use (RS256 always, as the spec's service; PS256, ES256, EdDSA
 * when a client registers it), plus rotated-out keys during their grace period.
 */
export class SigningKeys {
  readonly #slots = new Map<IdTokenSigningAlg, Slot>();
  readonly #signers = new Map<IdTokenSigningAlg, IdTokenSigner>();

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
    /** The keys kept across restarts, by algorithm; the others are generated. */
    initial: Partial<Record<IdTokenSigningAlg, KeyObject>> = {},
    algs: readonly IdTokenSigningAlg[] = ['RS256'],
  ) {
    for (const alg of ID_TOKEN_SIGNING_ALGS) {
      if (alg !== 'RS256' && !algs.includes(alg)) continue;
      const given = initial[alg];
      const key = given !== undefined ? Promise.resolve(given) : generateSigningKey(alg);
      const current = key.then((k) => prepareKey(k, alg));
      // An unhandled rejection here would only repeat in every caller; callers await `current`.
      current.catch(() => undefined);
      this.#slots.set(alg, { current, retired: [] });
    }
  }

  /** The algorithms this provider signs with. */
  get algs(): IdTokenSigningAlg[] {
    return [...this.#slots.keys()];
  }

  #slot(alg: IdTokenSigningAlg): Slot {
    const slot = this.#slots.get(alg);
    if (slot === undefined) throw new Error(`no ${alg} signing key: no client is registered with it`);
    return slot;
  }

  /** Sign JWT claims with the current key of `alg` (default RS256, as the spec says), with its `kid` in the header. */
  async sign(claims: JWTPayload, alg: IdTokenSigningAlg = 'RS256', typ = 'JWT'): Promise<string> {
    return compactJwt(alg, await this.#slot(alg).current, claims, typ);
  }

  /** The signing view of one algorithm (see {@link IdTokenSigner}). */
  signer(alg: IdTokenSigningAlg): IdTokenSigner {
    let signer = this.#signers.get(alg);
    if (signer === undefined) {
      const keyAlg = alg === 'PS256' ? 'PS256' : 'RS256';
      signer = {
        alg,
        sign: (claims) => this.sign(claims, alg),
        signAlternate: async (claims) =>
          compactJwt(alg === 'RS256' ? 'PS256' : 'RS256', await this.#slot(keyAlg).current, claims),
        publicKeyPem: async () => {
          const key = await this.#slot(alg).current;
          return {
            pem: createPublicKey(key.privateKey).export({ format: 'pem', type: 'spki' }).toString(),
            kid: key.kid,
          };
        },
        rotate: () => this.rotate(),
      };
      this.#signers.set(alg, signer);
    }
    return signer;
  }

  /** The published key set: the current key of each algorithm (RS256 first), then keys still in their grace period. */
  async jwks(): Promise<{ keys: JwksEntry[] }> {
    const now = this.clock();
    const current: JwksEntry[] = [];
    const retired: JwksEntry[] = [];
    for (const slot of this.#slots.values()) {
      current.push((await slot.current).jwk);
      slot.retired = slot.retired.filter((k) => (k.retireAt ?? 0) > now);
      retired.push(...slot.retired.map((k) => k.jwk));
    }
    return { keys: [...current, ...retired] };
  }

  /** Start signing with a fresh key of every algorithm; keep publishing the old ones for the grace period. */
  async rotate(): Promise<void> {
    await Promise.all(
      [...this.#slots].map(async ([alg, slot]) => {
        const next = await prepareKey(await generateSigningKey(alg), alg);
        const old = await slot.current;
        slot.retired.unshift({ ...old, retireAt: this.clock() + this.graceMs });
        slot.current = Promise.resolve(next);
      }),
    );
  }
}

/** A person's pairwise subject for a client: an HMAC, stable for one secret, distinct per client, irreversible. */
export function pairwiseSubject(secret: Buffer, clientId: string, personaId: string): string {
  return createHmac('sha256', secret).update(`${clientId}\u0000${personaId}`, 'utf8').digest('base64url');
}

/**
 * OIDC `at_hash` (OIDC Core 3.1.3.6): the left half of the access token's hash, base64url; SHA-512
 * for EdDSA (Ed25519's hash, as other providers and clients compute it), else SHA-256.
 */
export function accessTokenHash(accessToken: string, alg: IdTokenSigningAlg = 'RS256'): string {
  if (alg === 'EdDSA')
    return createHash('sha512').update(accessToken, 'ascii').digest().subarray(0, 32).toString('base64url');
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** Compare two secrets in constant time (lengths are hidden by hashing both first). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** A compact JWE (RFC 7516 7.1) of `plaintext` under AES-GCM `cek`, its protected header already encoded. */
function gcmCompact(encodedHeader: string, encryptedKey: string, cek: Buffer, iv: Buffer, plaintext: string): string {
  const cipher = createCipheriv(cek.length === 32 ? 'aes-256-gcm' : 'aes-128-gcm', cek, iv);
  cipher.setAAD(Buffer.from(encodedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${encodedHeader}.${encryptedKey}.${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

/** The protected header of every attribute: `dir` with the block key, A128GCM. */
const ATTRIBUTE_HEADER = base64url(JSON.stringify({ alg: 'dir', enc: 'A128GCM' }));

/**
 * The userinfo payload (spec 4.6): a fresh A128GCM block key as a JWK under RSA-OAEP-256/A256GCM
 * to the client's newest key (its `kid` in the header), each attribute `dir`/A128GCM under it.
 */
export async function encryptUserinfo(
  clientKey: { kid: string; key: KeyObject },
  attributes: Readonly<Record<string, string>>,
): Promise<{ key: string; data: Record<string, string> }> {
  const entries = Object.entries(attributes);
  // Every random value of the response in one draw: block key, content key, then one IV each.
  const random = pooledRandomBytes(16 + 32 + 12 * (entries.length + 1));
  const blockKey = random.subarray(0, 16);
  const cek = random.subarray(16, 48);
  const ivAt = (i: number): Buffer => random.subarray(48 + 12 * i, 60 + 12 * i);
  const blockJwk = JSON.stringify({ kty: 'oct', k: blockKey.toString('base64url'), alg: 'A128GCM' });
  const encryptedCek = publicEncrypt(
    { key: clientKey.key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    cek,
  );
  const keyHeader = base64url(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: clientKey.kid }));
  const key = gcmCompact(keyHeader, encryptedCek.toString('base64url'), cek, ivAt(0), blockJwk);
  const data: Record<string, string> = {};
  entries.forEach(([scope, value], i) => {
    data[scope] = gcmCompact(ATTRIBUTE_HEADER, '', blockKey, ivAt(i + 1), value);
  });
  return { key, data };
}
