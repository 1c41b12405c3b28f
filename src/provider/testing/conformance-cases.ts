/**
 * The cases of the offline conformance plan and how the provider breaks its output for each: the
 * OpenID Foundation's relying-party negative tests, our own hostile ones, and two positive ones.
 * Each says whether the outcome is a MUST or `stricter`, and on what `basis`. Signatures `jose`
 * will not make (`alg: none`, HS256 keyed with the public key) are built on node:crypto.
 */
import { createHmac, publicEncrypt, randomBytes, createCipheriv, constants, type KeyObject } from 'node:crypto';
import { CompactEncrypt, type JWTPayload } from 'jose';
import type { IdTokenSigner } from '../crypto.js';
import { base64url } from '../../encoding.js';

/** Id of a conformance case. */
export type ConformanceCaseId =
  | 'baseline'
  | 'rotated_kid'
  | 'invalid_signature'
  | 'alg_none'
  | 'hs256_public_key'
  | 'wrong_iss'
  | 'wrong_aud'
  | 'multiple_aud_without_azp'
  | 'aud_other_client_with_azp'
  | 'expired'
  | 'iat_in_future'
  | 'missing_sub'
  | 'missing_iat'
  | 'missing_exp'
  | 'nonce_mismatch'
  | 'nonce_missing'
  | 'wrong_at_hash'
  | 'state_modified'
  | 'userinfo_sub_mismatch'
  | 'userinfo_tampered_jwe'
  | 'userinfo_rsa1_5_key'
  // The FAPI 2.0 plan's own (conformance-fapi-cases.ts):
  | 'missing_aud'
  | 'missing_iss'
  | 'aud_array'
  | 'alternate_alg'
  | 'unencrypted_id_token'
  | 'iss_param_invalid'
  | 'iss_param_missing'
  | 'token_type_lowercase'
  | 'expires_in_missing';

/** One case of the plan. */
export interface ConformanceCase {
  id: ConformanceCaseId;
  /** What the provider does. */
  title: string;
  /**
   * Where the fault is: in the authorization response (the redirect to the callback), in the ID
   * token (token response) or in the userinfo response.
   */
  level: 'authorization_response' | 'id_token' | 'token_response' | 'userinfo';
  /** What a correct app does: sign the person in (`accept`) or refuse the login (`reject`). */
  expect: 'accept' | 'reject';
  /**
   * `must`: the specifications require this outcome of every client (OpenID Connect Core, RFC 6749,
   * RFC 7516). `stricter`: a careful client does it, the specifications do not require it.
   */
  requirement: 'must' | 'stricter';
  /** The rule behind `requirement`, in a few words. */
  basis: string;
}

type Rule = Pick<ConformanceCase, 'requirement' | 'basis'>;
const must = (basis: string): Rule => ({ requirement: 'must', basis });
const stricter = (basis: string): Rule => ({ requirement: 'stricter', basis });

const idToken = (
  id: ConformanceCaseId,
  title: string,
  rule: Rule,
  expect: 'accept' | 'reject' = 'reject',
): ConformanceCase => ({
  id,
  title,
  level: 'id_token',
  expect,
  ...rule,
});
const userinfo = (id: ConformanceCaseId, title: string, rule: Rule): ConformanceCase => ({
  id,
  title,
  level: 'userinfo',
  expect: 'reject',
  ...rule,
});

/** The plan, in the order consecutive authorizations receive it. */
export const CONFORMANCE_CASES: readonly ConformanceCase[] = [
  idToken(
    'baseline',
    'A correct login (positive baseline)',
    must('OIDC Core 3.1.3.7: a valid ID token is accepted'),
    'accept',
  ),
  idToken(
    'invalid_signature',
    'ID token with a signature that does not verify (the registered algorithm, a published kid)',
    must('OIDC Core 3.1.3.7 step 6'),
  ),
  idToken(
    'alg_none',
    'Unsigned ID token, alg "none"',
    must('OIDC Core 3.1.3.7 steps 6-7: alg must be the registered one (RS256 by default)'),
  ),
  idToken(
    'hs256_public_key',
    'ID token signed HS256 with the provider public key of the registered algorithm (PEM) as the secret',
    must('OIDC Core 3.1.3.7 step 7: alg must be the registered one, never an HMAC'),
  ),
  idToken('wrong_iss', 'ID token with another issuer', must('OIDC Core 3.1.3.7 step 2')),
  idToken('wrong_aud', 'ID token for another client (aud)', must('OIDC Core 3.1.3.7 step 3')),
  idToken(
    'multiple_aud_without_azp',
    'ID token with several audiences and no azp',
    stricter('OIDC Core 3.1.3.7 step 4 is a SHOULD'),
  ),
  idToken(
    'aud_other_client_with_azp',
    'ID token whose aud names another client and whose azp names this one',
    must('OIDC Core 3.1.3.7 step 3: aud must contain the client_id; azp does not stand in for it'),
  ),
  idToken('expired', 'ID token that expired an hour ago', must('OIDC Core 3.1.3.7 step 9')),
  idToken(
    'iat_in_future',
    'ID token issued an hour in the future (iat)',
    stricter('OIDC Core 3.1.3.7 step 10: rejecting on iat is a MAY'),
  ),
  idToken(
    'missing_sub',
    'ID token without sub',
    must('OIDC Core 2: sub is REQUIRED; without it there is no one to sign in'),
  ),
  idToken(
    'missing_iat',
    'ID token without iat',
    stricter('OIDC Core 2: iat is REQUIRED of the provider; 3.1.3.7 has no step for it'),
  ),
  idToken('missing_exp', 'ID token without exp', must('OIDC Core 3.1.3.7 step 9: the time must be before exp')),
  idToken('nonce_mismatch', 'ID token with another nonce', must('OIDC Core 3.1.3.7 step 11')),
  idToken('nonce_missing', 'ID token without the nonce that was sent', must('OIDC Core 3.1.3.7 step 11')),
  idToken(
    'wrong_at_hash',
    'ID token whose at_hash does not match the access token',
    stricter('OIDC Core 3.1.3.8: checking at_hash in the code flow is a MAY'),
  ),
  {
    id: 'state_modified',
    title: 'Authorization response whose state differs from the one sent (the code redeemed means the app ignored it)',
    level: 'authorization_response',
    expect: 'reject',
    ...must('RFC 6749 4.1.2 and 10.12, OIDC Core 3.1.2.7: the state must be checked against the one sent'),
  },
  userinfo(
    'userinfo_sub_mismatch',
    'Userinfo for another sub than the ID token',
    must('OIDC Core 5.3.2: sub must match the ID token'),
  ),
  userinfo(
    'userinfo_tampered_jwe',
    'Userinfo attribute JWE with a changed authentication tag',
    must('RFC 7516 5.2: a JWE whose tag fails must be rejected'),
  ),
  userinfo(
    'userinfo_rsa1_5_key',
    'Userinfo block key encrypted with RSA1_5',
    stricter("spec 2.4 uses RSA-OAEP-256; refusing RSA1_5 is a careful client's choice"),
  ),
  // Last: a client that never refetches the key set would fail every later case for that reason alone.
  idToken(
    'rotated_kid',
    'ID token signed with a new key after a rotation: unknown kid, in the JWKS (positive)',
    stricter('OIDC Core 10.1.1 describes refetching the key set on an unknown kid, without a MUST'),
    'accept',
  ),
];

/** `value` as JSON, base64url-encoded: a JOSE header or payload. */
const b64 = (value: unknown): string => base64url(JSON.stringify(value));

/** The ID token of a case, from the genuine claims. */
export async function caseIdToken(id: ConformanceCaseId, claims: JWTPayload, keys: IdTokenSigner): Promise<string> {
  const now = typeof claims.iat === 'number' ? claims.iat : Math.floor(Date.now() / 1000);
  const life = typeof claims.exp === 'number' ? claims.exp - now : 600;
  const without = (name: string): JWTPayload => Object.fromEntries(Object.entries(claims).filter(([k]) => k !== name));
  switch (id) {
    case 'rotated_kid':
      await keys.rotate();
      return keys.sign(claims);
    case 'invalid_signature': {
      const genuine = await keys.sign(claims);
      const other = await keys.sign({ ...claims, jti: randomBytes(16).toString('base64url') });
      return `${genuine.slice(0, genuine.lastIndexOf('.'))}.${other.slice(other.lastIndexOf('.') + 1)}`;
    }
    case 'alg_none':
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    case 'hs256_public_key': {
      const { pem, kid } = await keys.publicKeyPem();
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    }
    case 'wrong_iss':
      return keys.sign({ ...claims, iss: `${String(claims.iss)}/elsewhere` });
    case 'wrong_aud':
      return keys.sign({ ...claims, aud: 'another-relying-party' });
    case 'multiple_aud_without_azp':
      return keys.sign({ ...without('azp'), aud: [String(claims.aud), 'another-relying-party'] });
    case 'aud_other_client_with_azp':
      return keys.sign({ ...claims, aud: 'another-relying-party', azp: String(claims.aud) });
    case 'expired':
      return keys.sign({ ...claims, iat: now - 3600 - life, exp: now - 3600 });
    case 'iat_in_future':
      return keys.sign({ ...claims, iat: now + 3600, exp: now + 3600 + life });
    case 'missing_sub':
    case 'missing_iat':
    case 'missing_exp':
    case 'missing_aud':
    case 'missing_iss':
      return keys.sign(without(id.slice('missing_'.length)));
    case 'aud_array':
      return keys.sign({ ...claims, aud: [String(claims.aud)] });
    case 'alternate_alg':
      return keys.signAlternate(claims);
    case 'nonce_mismatch':
      return keys.sign({ ...claims, nonce: randomBytes(16).toString('base64url') });
    case 'nonce_missing':
      return keys.sign(without('nonce'));
    case 'wrong_at_hash':
      return keys.sign({ ...claims, at_hash: randomBytes(16).toString('base64url') });
    default:
      return keys.sign(claims);
  }
}

/** The userinfo answer of a case, from the genuine one and the attributes it encrypts. */
export async function caseUserinfo(
  id: ConformanceCaseId,
  answer: { sub: string; key: string; data: Record<string, string> },
  clientKey: { kid: string; key: KeyObject },
  attributes: Readonly<Record<string, string>>,
): Promise<{ sub: string; key: string; data: Record<string, string> }> {
  if (id === 'userinfo_sub_mismatch') return { ...answer, sub: randomBytes(32).toString('base64url') };
  if (id === 'userinfo_tampered_jwe') {
    const data = { ...answer.data };
    const [name] = Object.keys(data);
    if (name !== undefined) {
      const parts = data[name]!.split('.');
      const tag = Buffer.from(parts[4] ?? '', 'base64url');
      tag[0] = (tag[0] ?? 0) ^ 0xff;
      parts[4] = tag.toString('base64url');
      data[name] = parts.join('.');
    }
    return { ...answer, data };
  }
  if (id === 'userinfo_rsa1_5_key') return { sub: answer.sub, ...(await rsa15Userinfo(clientKey, attributes)) };
  return answer;
}

/**
 * Attributes under a block key wrapped with `RSA1_5` (refused by careful clients: padding
 * oracles). A client that accepts it reads the real attributes, so acceptance shows as a sign-in.
 */
async function rsa15Userinfo(
  clientKey: { kid: string; key: KeyObject },
  attributes: Readonly<Record<string, string>>,
): Promise<{ key: string; data: Record<string, string> }> {
  const blockKey = randomBytes(16);
  const data: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    data[name] = await new CompactEncrypt(new TextEncoder().encode(value))
      .setProtectedHeader({ alg: 'dir', enc: 'A128GCM' })
      .encrypt(blockKey);
  }
  const cek = randomBytes(32);
  const iv = randomBytes(12);
  const header = b64({ alg: 'RSA1_5', enc: 'A256GCM', kid: clientKey.kid });
  const cipher = createCipheriv('aes-256-gcm', cek, iv);
  cipher.setAAD(Buffer.from(header, 'ascii'));
  const blockJwk = { kty: 'oct', k: blockKey.toString('base64url'), alg: 'A128GCM' };
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(blockJwk)), cipher.final()]);
  const encryptedKey = publicEncrypt({ key: clientKey.key, padding: constants.RSA_PKCS1_PADDING }, cek);
  const parts = [header, encryptedKey, iv, ciphertext, cipher.getAuthTag()];
  return { key: parts.map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.'), data };
}
