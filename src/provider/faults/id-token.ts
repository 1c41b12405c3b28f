/** ID-token faults: a genuine token's claims signed again as the fault asks, with the genuine algorithm. */
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, SignJWT, type JWTPayload } from 'jose';
import { epochSeconds, type Clock } from '../../clock.js';
import { generateSigningKey, ID_TOKEN_SIGNING_ALGS, type IdTokenSigningAlg, type SigningKeys } from '../crypto.js';

/** The ID-token faults this file makes. */
export type ReissueKind = 'bad_signature' | 'unknown_key' | 'expired_id_token' | 'wrong_audience';

/** How far in the past an `expired_id_token` expired, in seconds. */
const EXPIRED_BY_S = 3600;

interface StrangerKey {
  kid: string;
  privateKey: KeyObject;
}

const strangerKeys = new Map<'RSA' | IdTokenSigningAlg, Promise<StrangerKey>>();

/** The never-published key of `alg`'s kind, one per process; made as soon as an `unknown_key` fault is injected, as RSA generation is slow. */
export function strangerKeyReady(alg: IdTokenSigningAlg = 'RS256'): Promise<StrangerKey> {
  const kind = alg === 'RS256' || alg === 'PS256' ? 'RSA' : alg;
  let strangerKey = strangerKeys.get(kind);
  if (strangerKey === undefined) {
    const made = (async (): Promise<StrangerKey> => {
      const privateKey = await generateSigningKey(alg);
      return { kid: await calculateJwkThumbprint(await exportJWK(createPublicKey(privateKey)), 'sha256'), privateKey };
    })();
    // A failure is reported to the request that awaits it; forget it so the next one retries.
    made.catch(() => {
      strangerKeys.delete(kind);
    });
    strangerKeys.set(kind, made);
    strangerKey = made;
  }
  return strangerKey;
}

/** The algorithm `idToken` was signed with, when it is one the provider signs with. */
function algOf(idToken: string): IdTokenSigningAlg {
  const alg = decodeProtectedHeader(idToken).alg;
  return ID_TOKEN_SIGNING_ALGS.find((a) => a === alg) ?? 'RS256';
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
  const alg = algOf(idToken);
  if (kind === 'bad_signature') {
    // The provider's own key and kid, but a signature made over other claims: a valid-looking
    // signature that does not verify.
    const other = await ctx.keys.sign({ ...claims, jti: randomBytes(16).toString('base64url') }, alg);
    const signingInput = idToken.slice(0, idToken.lastIndexOf('.'));
    return `${signingInput}.${other.slice(other.lastIndexOf('.') + 1)}`;
  }
  if (kind === 'unknown_key') {
    const key = await strangerKeyReady(alg);
    return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  }
  if (kind === 'expired_id_token') {
    const exp = epochSeconds(ctx.clock) - EXPIRED_BY_S;
    return ctx.keys.sign({ ...claims, exp, iat: exp - ctx.accessTokenTtl }, alg);
  }
  const audience = typeof claims.aud === 'string' ? claims.aud : '';
  const other = [...ctx.clientIds()].find((id) => id !== audience) ?? 'another-relying-party';
  return ctx.keys.sign({ ...claims, aud: other }, alg);
}
