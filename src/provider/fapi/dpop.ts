/**
 * DPoP proofs (RFC 9449 section 4.3) at PAR, token and userinfo, refused (`invalid_dpop_proof`)
 * unless: one `DPoP` header with `typ: "dpop+jwt"`, an `alg` of {@link FAPI_SIGNING_ALGS} and a
 * public `jwk` that verifies the signature; `htm`/`htu` match the request (without query and
 * fragment); `iat` within {@link DPOP_IAT_WINDOW_S}; a new `jti` (per key, for the window); at
 * userinfo, `ath` = base64url(SHA-256(token)). With `dpopNonce`, a missing or stale `nonce` is
 * answered `use_dpop_nonce` with a fresh one, so a client's one retry can be tested.
 */
import { rememberJti } from './seen-jtis.js';
import { createHash, createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, type JWK, jwtVerify, type JWTPayload } from 'jose';
import type { ProviderContext } from '../context.js';
import { JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH, withinCompactLimits } from '../../compact-limits.js';
import type { DpopNonces } from './dpop-nonces.js';
import { algName, FAPI_SIGNING_ALGS } from './registration.js';

/** How far a proof's `iat` may be from now, in seconds, either way. */
export const DPOP_IAT_WINDOW_S = 60;

/** Why a proof was refused. */
export class DpopRefusal extends Error {
  constructor(
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    readonly description: string,
    /** The nonce to send in `DPoP-Nonce`, for `use_dpop_nonce`. */
    readonly nonce?: string,
  ) {
    super(description);
  }
}

/** What the proof must match. */
export interface ProofTarget {
  method: string;
  /** The endpoint's URL, without query. */
  url: string;
  /** The access token, at a resource (userinfo): `ath` must be its hash. */
  accessToken?: string;
  /**
   * The thumbprint the access token is bound to (`cnf.jkt`): a proof of another key is returned
   * for the caller to refuse without remembering its `jti`, so throwaway keys cannot fill the store.
   */
  boundJkt?: string;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}

function refuse(description: string): DpopRefusal {
  return new DpopRefusal('invalid_dpop_proof', description);
}

/**
 * Check the DPoP proof of a request of `clientId`, and return the RFC 7638 thumbprint of its key.
 * @throws DpopRefusal
 */
export async function verifyDpopProof(
  ctx: ProviderContext,
  nonces: DpopNonces | undefined,
  clientId: string,
  header: string | string[] | undefined,
  target: ProofTarget,
): Promise<string> {
  if (header === undefined || header === '')
    throw refuse("A DPoP proof is required: send a DPoP header with a proof signed by the login's DPoP key.");
  if (Array.isArray(header) || header.includes(',')) throw refuse('Send exactly one DPoP header.');
  if (!withinCompactLimits(header, JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH)) {
    throw refuse(
      `The DPoP proof is not a compact JWS of three parts and at most ${MAX_PROVIDER_JWT_LENGTH} characters.`,
    );
  }
  let protectedHeader: ReturnType<typeof decodeProtectedHeader>;
  try {
    protectedHeader = decodeProtectedHeader(header);
  } catch {
    throw refuse('The DPoP header is not a compact JWS.');
  }
  if (protectedHeader.typ !== 'dpop+jwt') throw refuse('The DPoP proof header typ must be dpop+jwt.');
  // No JWS extension is understood: a crit header fails closed, before its key is imported.
  if (protectedHeader.crit !== undefined)
    throw refuse('The DPoP proof header names critical extensions (crit); none is understood: sign without crit.');
  const alg = protectedHeader.alg;
  if (!FAPI_SIGNING_ALGS.includes(alg as (typeof FAPI_SIGNING_ALGS)[number])) {
    throw refuse(
      `The DPoP proof alg ${algName(alg)} is not accepted: sign with ${FAPI_SIGNING_ALGS.join(', ')}; never none or an HMAC.`,
    );
  }
  const jwk = protectedHeader.jwk as JWK | undefined;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
    throw refuse('The DPoP proof header must carry the public key as jwk.');
  if (PRIVATE_MEMBERS.some((m) => m in jwk))
    throw refuse('The DPoP proof jwk holds a private key member: put only the public key in the header.');
  let publicKey: KeyObject;
  try {
    // A node KeyObject: jose verifies with it for less CPU than after importing a CryptoKey.
    publicKey = createPublicKey({ key: jwk as NodeJwk, format: 'jwk' });
  } catch {
    throw refuse('The DPoP proof jwk is not a usable public key.');
  }
  let payload: JWTPayload;
  try {
    payload = (
      await jwtVerify(header, publicKey, {
        typ: 'dpop+jwt',
        algorithms: [...FAPI_SIGNING_ALGS],
        currentDate: new Date(ctx.config.clock()),
      })
    ).payload;
  } catch {
    throw refuse('The DPoP proof signature does not verify with the jwk of its header.');
  }
  if (payload.htm !== target.method)
    throw refuse(`The DPoP proof htm must be ${target.method}, the method of this request.`);
  const htu = typeof payload.htu === 'string' ? withoutQuery(payload.htu) : undefined;
  if (htu === undefined || htu !== withoutQuery(target.url))
    throw refuse(`The DPoP proof htu must be ${target.url}, the URL of this request.`);
  const now = Math.floor(ctx.config.clock() / 1000);
  if (typeof payload.iat !== 'number' || Math.abs(payload.iat - now) > DPOP_IAT_WINDOW_S) {
    throw refuse(
      `The DPoP proof iat must be now (within ${DPOP_IAT_WINDOW_S} s): make a fresh proof for each request, and check the clock.`,
    );
  }
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256)
    throw refuse('The DPoP proof needs a jti: 1 to 256 characters, new for each proof.');
  if (target.accessToken !== undefined) {
    const ath = createHash('sha256').update(target.accessToken, 'ascii').digest('base64url');
    if (payload.ath !== ath)
      throw refuse(
        'The DPoP proof ath must be base64url(SHA-256(access token)) of the token in the Authorization header.',
      );
  }
  if (nonces !== undefined && !nonces.accepts(payload.nonce)) {
    throw new DpopRefusal(
      'use_dpop_nonce',
      'Send the proof again with the nonce of the DPoP-Nonce header.',
      nonces.current(),
    );
  }
  let jkt: string;
  try {
    jkt = await calculateJwkThumbprint(jwk, 'sha256');
  } catch {
    throw refuse('The DPoP proof jwk is not a usable public key.');
  }
  if (target.boundJkt !== undefined && jkt !== target.boundJkt) return jkt;
  const key = `dpop\u0000${jkt}\u0000${payload.jti}`;
  if (ctx.stores.usedJtis.has(key)) {
    ctx.audit.flag(clientId, 'dpop_proof_jti_reused');
    throw refuse('The DPoP proof jti was already used: make a fresh proof, with a new jti, for every request.');
  }
  rememberJti(ctx, clientId, key, (payload.iat + 2 * DPOP_IAT_WINDOW_S) * 1000);
  return jkt;
}
