/**
 * The ID-token faults: a genuine ID token's claims, signed again the way the fault asks (a
 * signature that does not verify, a key never published, an expired token, another audience).
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, SignJWT, type JWTPayload } from 'jose';
import { epochSeconds, type Clock } from '../../clock.js';
import { generateRsaKeyPair, type SigningKeys } from '../crypto.js';

/** The ID-token faults this file makes. */
export type ReissueKind = 'bad_signature' | 'unknown_key' | 'expired_id_token' | 'wrong_audience';

/** How far in the past an `expired_id_token` expired, in seconds. */
const EXPIRED_BY_S = 3600;

interface StrangerKey {
  kid: string;
  privateKey: KeyObject;
}

let strangerKey: Promise<StrangerKey> | undefined;

/**
 * The never-published key, one per process, made on first need (an RSA key takes from tens to
 * hundreds of ms to generate, so it is started as soon as an `unknown_key` fault is injected).
 */
export function strangerKeyReady(): Promise<StrangerKey> {
  if (strangerKey === undefined) {
    const made = (async (): Promise<StrangerKey> => {
      const { privateKey, publicKey } = await generateRsaKeyPair();
      return { kid: await calculateJwkThumbprint(await exportJWK(publicKey), 'sha256'), privateKey };
    })();
    // A failure is reported to the request that awaits it; forget it so the next one retries.
    made.catch(() => {
      strangerKey = undefined;
    });
    strangerKey = made;
  }
  return strangerKey;
}

/** What re-signing needs of the provider. */
export interface ReissueContext {
  keys: SigningKeys;
  clock: Clock;
  /** ID-token lifetime, in seconds. */
  accessTokenTtl: number;
  /** Registered client ids (one other than the audience is named by `wrong_audience`). */
  clientIds(): Iterable<string>;
}

/** The claims of a genuine ID token, signed again the way the fault asks. */
export async function reissueIdToken(ctx: ReissueContext, kind: ReissueKind, idToken: string): Promise<string> {
  const claims: JWTPayload = decodeJwt(idToken);
  if (kind === 'bad_signature') {
    // The provider's own key and kid, but a signature made over other claims: a valid-looking
    // RS256 signature that does not verify.
    const other = await ctx.keys.sign({ ...claims, jti: randomBytes(16).toString('base64url') });
    const signingInput = idToken.slice(0, idToken.lastIndexOf('.'));
    return `${signingInput}.${other.slice(other.lastIndexOf('.') + 1)}`;
  }
  if (kind === 'unknown_key') {
    const key = await strangerKeyReady();
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  }
  if (kind === 'expired_id_token') {
    const exp = epochSeconds(ctx.clock) - EXPIRED_BY_S;
    return ctx.keys.sign({ ...claims, exp, iat: exp - ctx.accessTokenTtl });
  }
  const audience = typeof claims.aud === 'string' ? claims.aud : '';
  const other = [...ctx.clientIds()].find((id) => id !== audience) ?? 'another-relying-party';
  return ctx.keys.sign({ ...claims, aud: other });
}
