/**
 * Compact JWS signing with node:crypto, for the JWTs the client makes in the FAPI 2.0 profile
 * (client assertions and DPoP proofs, five per login): jose signs through WebCrypto and converts
 * the key on every call, several times the CPU (figures in docs/internals.md). The tokens are
 * verified by jose in the tests (test/client/fapi-crypto.test.ts).
 *
 * A header that is the same for every token of a key (the assertion key's `kid`, the login's
 * DPoP public key) is encoded once, by {@link encodeJwsHeader}, and each token then signs only
 * its own claims ({@link signWithHeader}).
 */
import { constants, sign, type KeyObject } from 'node:crypto';
import { derToJose } from './ecdsa.js';
import { base64url } from '../encoding.js';

/** The algorithms the client signs with (FAPI 2.0 5.4: ES256, PS256, EdDSA). */
export type AssertionAlgorithm = 'ES256' | 'PS256' | 'EdDSA';

/** The base64url JOSE header segment: `header` with `alg` last. */
export function encodeJwsHeader(header: Record<string, unknown>, alg: AssertionAlgorithm): string {
  return base64url(JSON.stringify({ ...header, alg }));
}

/** The JOSE header and claims of a token, signed with `key` under `alg` (ES256, PS256 or EdDSA). */
export function signCompactJwt(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  key: KeyObject,
  alg: AssertionAlgorithm,
): string {
  return signWithHeader(encodeJwsHeader(header, alg), claims, key, alg);
}

/** The claims signed under a header segment made by {@link encodeJwsHeader} with the same `alg`. */
export function signWithHeader(
  headerSegment: string,
  claims: Record<string, unknown>,
  key: KeyObject,
  alg: AssertionAlgorithm,
): string {
  const input = `${headerSegment}.${base64url(JSON.stringify(claims))}`;
  const data = Buffer.from(input, 'ascii');
  let signature: Buffer;
  if (alg === 'ES256') signature = derToJose(sign('sha256', data, key), 32);
  else if (alg === 'PS256')
    signature = sign('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  else signature = sign(null, data, key);
  return `${input}.${signature.toString('base64url')}`;
}

/** The size of each JOSE signature a signer may return, when fixed: ES256 is raw `r || s`. */
const SIGNATURE_BYTES: Readonly<Partial<Record<AssertionAlgorithm, number>>> = { ES256: 64, EdDSA: 64 };

/**
 * The claims signed under a header segment by a key held elsewhere (an HSM or a KMS): `sign`
 * gets the ASCII signing input and resolves to the JOSE signature.
 * @throws TypeError when the signature is not of the size `alg` makes (a DER ECDSA signature,
 *   for instance, which `derToJose` turns into the JOSE form).
 */
export async function signWithSigner(
  headerSegment: string,
  claims: Record<string, unknown>,
  sign: (signingInput: Uint8Array) => Promise<Uint8Array>,
  alg: AssertionAlgorithm,
): Promise<string> {
  const input = `${headerSegment}.${base64url(JSON.stringify(claims))}`;
  const signature = await sign(Buffer.from(input, 'ascii'));
  const size = SIGNATURE_BYTES[alg];
  if (
    !(signature instanceof Uint8Array) ||
    signature.length === 0 ||
    (size !== undefined && signature.length !== size)
  ) {
    throw new TypeError(
      `The ${alg} signer returned ${signature instanceof Uint8Array ? `${signature.length} bytes` : 'no bytes'}; it must resolve to the JOSE signature${alg === 'ES256' ? ' (64 bytes of r || s: convert a DER signature with derToJose)' : ''}`,
    );
  }
  return `${input}.${Buffer.from(signature.buffer, signature.byteOffset, signature.length).toString('base64url')}`;
}
