/**
 * The provider's cryptography: ID-token signing keys (with rotation), pairwise subject
 * identifiers, the userinfo encryption, and constant-time secret comparison.
 *
 * The two operations of every login, the RS256 ID-token signature and the userinfo JWEs, are
 * written out here with node:crypto, synchronously: they are short and fully specified (RFC 7515
 * compact JWS, RFC 7516 compact JWE), and `jose` runs RSA signing on the thread pool, whose
 * hand-off cost more CPU than the signature itself. Key export, thumbprints and the hostile
 * tokens of the test kit still go through `jose`, and the interop tests prove the output with
 * `jose`, openid-client, oauth4webapi and the official client.
 */
import {
  constants,
  createCipheriv,
  createHash,
  createHmac,
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

/** One entry of the JWKS (spec 2.6): exactly these fields. */
export interface JwksEntry {
  kty: 'RSA';
  kid: string;
  n: string;
  e: string;
  use: 'sig';
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: JwksEntry;
  /** When this key stops being published (ms), once it has been rotated out. */
  retireAt?: number;
}

async function prepareKey(privateKey: KeyObject): Promise<SigningKey> {
  const { n, e } = await exportJWK(privateKey);
  if (typeof n !== 'string' || typeof e !== 'string') throw new Error('signing key has no RSA modulus or exponent');
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n, e }, 'sha256');
  return { kid, privateKey, jwk: { kty: 'RSA', kid, n, e, use: 'sig' } };
}

const generateKeyPairAsync = promisify(generateKeyPair);

/**
 * A fresh RSA-2048 key pair, generated off the event loop: generation takes tens to hundreds of
 * ms, and the provider keeps answering meanwhile.
 */
export async function generateRsaKeyPair(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return generateKeyPairAsync('rsa', { modulusLength: 2048 });
}

/** The ID-token signing keys: one current key, plus rotated-out keys during their grace period. */
export class SigningKeys {
  private current: Promise<SigningKey>;
  private retired: SigningKey[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
    initial?: KeyObject,
  ) {
    this.current = (initial ? Promise.resolve(initial) : generateRsaKeyPair().then((pair) => pair.privateKey)).then(prepareKey);
    // An unhandled rejection here would only repeat in every caller; callers await `current`.
    this.current.catch(() => undefined);
  }

  /** Sign JWT claims with the current key, RS256, with its `kid` in the header. */
  async sign(claims: JWTPayload): Promise<string> {
    const key = await this.current;
    const signingInput = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: key.kid }))}.${base64url(JSON.stringify(claims))}`;
    return `${signingInput}.${signWith('sha256', Buffer.from(signingInput, 'ascii'), key.privateKey).toString('base64url')}`;
  }

  /**
   * Sign JWT claims with the current key and its `kid`, but PS256: only the conformance plan's
   * `alternate_alg` case does this (a signature that verifies, under an algorithm not registered).
   */
  async signPs256(claims: JWTPayload): Promise<string> {
    const key = await this.current;
    const signingInput = `${base64url(JSON.stringify({ alg: 'PS256', typ: 'JWT', kid: key.kid }))}.${base64url(JSON.stringify(claims))}`;
    const signature = signWith('sha256', Buffer.from(signingInput, 'ascii'), {
      key: key.privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  /** The published key set: the current key first, then keys still in their grace period. */
  async jwks(): Promise<{ keys: JwksEntry[] }> {
    const current = await this.current;
    const now = this.clock();
    this.retired = this.retired.filter((k) => (k.retireAt ?? 0) > now);
    return { keys: [current.jwk, ...this.retired.map((k) => k.jwk)] };
  }

  /** Start signing with a fresh key; keep publishing the old one for the grace period. */
  async rotate(): Promise<void> {
    const next = await prepareKey((await generateRsaKeyPair()).privateKey);
    const old = await this.current;
    this.retired.unshift({ ...old, retireAt: this.clock() + this.graceMs });
    this.current = Promise.resolve(next);
  }
}

/**
 * The pairwise subject identifier of a person for a client: a keyed HMAC, so it is stable for
 * the same secret, different across clients, and not reversible without the secret.
 */
export function pairwiseSubject(secret: Buffer, clientId: string, personaId: string): string {
  return createHmac('sha256', secret).update(`${clientId}\u0000${personaId}`, 'utf8').digest('base64url');
}

/** OIDC `at_hash` for RS256: the left half of SHA-256 of the access token, base64url. */
export function accessTokenHash(accessToken: string): string {
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
 * The userinfo payload: a fresh AES-128-GCM block key, encrypted (RSA-OAEP-256 / A256GCM) as a
 * JWK to the client's (newest) public key, whose `kid` is in the header, and each attribute
 * encrypted with the block key (`dir` / A128GCM).
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
  const encryptedCek = publicEncrypt({ key: clientKey.key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, cek);
  const keyHeader = base64url(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: clientKey.kid }));
  const key = gcmCompact(keyHeader, encryptedCek.toString('base64url'), cek, ivAt(0), blockJwk);
  const data: Record<string, string> = {};
  entries.forEach(([scope, value], i) => {
    data[scope] = gcmCompact(ATTRIBUTE_HEADER, '', blockKey, ivAt(i + 1), value);
  });
  return { key, data };
}
