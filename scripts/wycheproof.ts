/**
 * Project Wycheproof's vectors driven through `src/jose`: every file of
 * `../shared/wycheproof/vectors` beside the repository (gzipped JSON, Apache-2.0, read in place and
 * never copied here), every group, every test. A `valid` vector must be accepted with the right
 * output, an `invalid` one refused. `acceptable` vectors are the implementation's choice: their
 * decision is printed and counted apart, as neither passed nor failed. A vector of a family the
 * library does not take at all (HMAC, RSA1_5, compression, IVs and tags of other sizes than JOSE's,
 * OAEP labels, the JSON serialization) is skipped by design when `valid`, with the reason,
 * counted apart; when `invalid` it must be refused like any other.
 *
 * Run: `npm run wycheproof`. Prints per-file counts and ends with `N passed, N failed`; exits 1
 * on any failure or when the vectors are missing.
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  aesCbcDecrypt,
  aesGcmDecrypt,
  aesKeyUnwrap,
  decryptCompactJwe,
  derToJose,
  ECDH_ES_ALGORITHMS,
  ecdhSharedSecret,
  importVerificationJwk,
  isJwsAlgorithm,
  type JwsAlgorithm,
  openCompactJws,
  rsaOaepUnwrap,
  verifySignature,
} from '../src/jose/index.js';
import { ATTRIBUTE_ALGORITHMS, KEY_WRAP_ALGORITHMS } from '../src/client/userinfo-crypto.js';

/** `../shared/wycheproof/vectors` from the repository root; `WYCHEPROOF_VECTORS` names another folder (a worktree elsewhere). */
const VECTORS = process.env.WYCHEPROOF_VECTORS ?? resolve(__dirname, '..', '..', 'shared', 'wycheproof', 'vectors');

// biome-ignore lint/suspicious/noExplicitAny: the vector files are JSON of several schemas, read field by field
type Json = Record<string, any>;
/** One vector's outcome: the output it gave (accepted), or a refusal; or a skip by design with its reason. */
type Outcome = { accepted: boolean } | { skip: string };

const hex = (text: string | undefined): Buffer => Buffer.from(text ?? '', 'hex');

/** Runs `step`; accepted when it returns true, refused when it returns false or throws. */
function decide(step: () => boolean): Outcome {
  try {
    return { accepted: step() };
  } catch {
    return { accepted: false };
  }
}

// --- signatures -----------------------------------------------------------------------------

const ECDSA_ALG: Record<string, JwsAlgorithm> = { 'SHA-256': 'ES256', 'SHA-384': 'ES384', 'SHA-512': 'ES512' };
const ECDSA_SIZE: Record<string, number> = { secp256r1: 32, secp384r1: 48, secp521r1: 66 };

/** A group's public key, through the library's JWK import when the group has a JWK. */
function groupPublicKey(group: Json): KeyObject | undefined {
  if (group.publicKeyJwk !== undefined) return importVerificationJwk(group.publicKeyJwk)?.key;
  return createPublicKey({ key: hex(group.publicKeyDer), format: 'der', type: 'spki' });
}

function signatureTest(alg: JwsAlgorithm, der: number | undefined) {
  return (group: Json, test: Json): Outcome => {
    const key = groupPublicKey(group);
    if (key === undefined) return { accepted: false };
    return decide(() => {
      const sig = der === undefined ? hex(test.sig) : derToJose(hex(test.sig), der);
      return verifySignature(alg, key, hex(test.msg), sig);
    });
  };
}

function ecdsaHandler(file: string): Handler {
  return (group, test) => {
    const alg = ECDSA_ALG[group.sha];
    const curve = group.publicKey?.curve as string;
    if (alg === undefined || ECDSA_SIZE[curve] === undefined)
      return { skip: `${curve} with ${group.sha}: not a JOSE pair` };
    const size = ECDSA_SIZE[curve]!;
    if (alg !== { 32: 'ES256', 48: 'ES384', 66: 'ES512' }[size])
      return { skip: `${curve} with ${group.sha}: not a JOSE pair` };
    return signatureTest(alg, file.includes('p1363') ? undefined : size)(group, test);
  };
}

function rsaPssHandler(group: Json, test: Json): Outcome {
  if (group.sha !== 'SHA-256' || group.mgfSha !== 'SHA-256' || Number(group.sLen) !== 32)
    return { skip: 'PSS parameters other than PS256 (SHA-256, MGF1-SHA-256, 32-byte salt)' };
  return signatureTest('PS256', undefined)(group, test);
}

function rsaPkcs1Handler(group: Json, test: Json): Outcome {
  if (group.sha !== 'SHA-256') return { skip: 'RSASSA-PKCS1-v1_5 with another hash than RS256' };
  return signatureTest('RS256', undefined)(group, test);
}

// --- key agreement and ciphers --------------------------------------------------------------

function ecdhHandler(_group: Json, test: Json): Outcome {
  return decide(() => {
    const key = createPrivateKey({ key: test.private, format: 'jwk' });
    return ecdhSharedSecret(key, test.public).equals(hex(test.shared));
  });
}

function aesGcmHandler(_group: Json, test: Json): Outcome {
  const [iv, tag] = [hex(test.iv), hex(test.tag)];
  if (test.result === 'valid' && (iv.length !== 12 || tag.length !== 16))
    return {
      skip: 'AES-GCM with an IV other than 96 bits or a tag other than 128 bits (JOSE uses only these, RFC 7518 5.3)',
    };
  return decide(() => aesGcmDecrypt(hex(test.key), iv, hex(test.aad), hex(test.ct), tag).equals(hex(test.msg)));
}

function aesWrapHandler(_group: Json, test: Json): Outcome {
  return decide(() => aesKeyUnwrap(hex(test.ct), hex(test.key)).equals(hex(test.msg)));
}

function aesCbcHandler(_group: Json, test: Json): Outcome {
  return decide(() => aesCbcDecrypt(hex(test.key), hex(test.iv), hex(test.ct)).equals(hex(test.msg)));
}

function rsaOaepHandler(group: Json, test: Json): Outcome {
  const alg =
    group.sha === 'SHA-256' && group.mgfSha === 'SHA-256'
      ? 'RSA-OAEP-256'
      : group.sha === 'SHA-1' && group.mgfSha === 'SHA-1'
        ? 'RSA-OAEP'
        : undefined;
  if (alg === undefined) return { skip: 'OAEP with hashes other than RSA-OAEP (SHA-1) or RSA-OAEP-256 (SHA-256)' };
  if (test.result === 'valid' && (test.label ?? '') !== '')
    return { skip: 'OAEP with a label (JOSE uses none, RFC 7518 4.3)' };
  const key = createPrivateKey({ key: hex(group.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
  return decide(() => rsaOaepUnwrap(alg, hex(test.ct), key).equals(hex(test.msg)));
}

// --- JOSE files ------------------------------------------------------------------------------

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function publicPart(jwk: Json): Json {
  return Object.fromEntries(Object.entries(jwk).filter(([m]) => !PRIVATE_MEMBERS.includes(m)));
}

function headerOf(token: string): Json | undefined {
  try {
    return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A JWS against a key set as the client reads one: the header's alg must be one the library
 * verifies; the key is the one its kid names among those whose JWK alg, when stated, is that alg.
 */
function jwsAgainstKeys(token: unknown, jwks: Json[], result: string): Outcome {
  if (typeof token !== 'string')
    return result === 'valid'
      ? { skip: 'JSON serialization (the library reads compact JWS only)' }
      : { accepted: false };
  const header = headerOf(token);
  const alg = header?.alg;
  if (typeof alg === 'string' && !isJwsAlgorithm(alg) && result === 'valid')
    return {
      skip: `${/^[\w-]{1,12}$/.test(alg) ? alg : 'this alg'}: not among the algorithms verified (RS256, PS256, ES256/384/512, EdDSA; never HMAC)`,
    };
  if (!isJwsAlgorithm(alg)) return { accepted: false };
  const named = jwks.filter((k) => header?.kid === undefined || k.kid === header.kid);
  const stated = named.filter((k) => k.alg !== undefined && k.alg !== alg);
  if (
    result === 'valid' &&
    stated.length > 0 &&
    stated.every((k) => !isJwsAlgorithm(k.alg)) &&
    named.length === stated.length
  )
    return {
      skip: `the key's JWK names "${stated[0]!.alg}", not a registered JWS algorithm: a key is used only under the alg its JWK names`,
    };
  const fitting = named.filter((k) => k.alg === undefined || k.alg === alg);
  if (fitting.length !== 1) return { accepted: false };
  const imported = importVerificationJwk(publicPart(fitting[0]!));
  if (imported === undefined) return { accepted: false };
  return decide(() => openCompactJws(token, imported.key, alg) !== undefined);
}

function jwsHandler(group: Json, test: Json): Outcome {
  const keys = (group.public ?? group.private) as Json | undefined;
  const set = keys === undefined ? [] : Array.isArray(keys.keys) ? keys.keys : [keys];
  return jwsAgainstKeys(test.jws, set, test.result);
}

/** Every key-management algorithm the library decrypts: the attributes', the block key's and the ID token's. */
const JWE_ALGORITHMS = [...ATTRIBUTE_ALGORITHMS, ...KEY_WRAP_ALGORITHMS, ...ECDH_ES_ALGORITHMS];

function jweHandler(group: Json, test: Json): Outcome {
  const jwk = group.private as Json;
  if (typeof test.jwe !== 'string')
    return test.result === 'valid'
      ? { skip: 'JSON serialization (the library reads compact JWE only)' }
      : { accepted: false };
  const header = headerOf(test.jwe);
  if (test.result === 'valid' && header?.alg === 'RSA1_5')
    return { skip: 'RSA1_5 key transport: refused by design (Bleichenbacher padding oracles, RFC 9325)' };
  if (test.result === 'valid' && header?.zip !== undefined)
    return { skip: 'compressed plaintext (zip): refused by design' };
  return decide(() => {
    const key =
      jwk.kty === 'oct'
        ? Buffer.from(String(jwk.k), 'base64url')
        : createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    const plaintext = decryptCompactJwe(test.jwe, [{ key, alg: jwk.alg, kid: jwk.kid }], {
      algorithms: JWE_ALGORITHMS,
    });
    return test.pt === undefined || plaintext.equals(hex(test.pt));
  });
}

// --- the run ---------------------------------------------------------------------------------

type Handler = (group: Json, test: Json) => Outcome;

function handlerFor(file: string): Handler | undefined {
  if (file.startsWith('ecdsa_')) return ecdsaHandler(file);
  if (file.startsWith('ed25519_')) return signatureTest('EdDSA', undefined);
  if (file.startsWith('rsa_pss_')) return rsaPssHandler;
  if (file.startsWith('rsa_signature_')) return rsaPkcs1Handler;
  if (file.startsWith('rsa_oaep_')) return rsaOaepHandler;
  if (file.startsWith('ecdh_')) return ecdhHandler;
  if (file.startsWith('aes_gcm_')) return aesGcmHandler;
  if (file.startsWith('aes_wrap_')) return aesWrapHandler;
  if (file.startsWith('aes_cbc_pkcs5_')) return aesCbcHandler;
  if (file.startsWith('json_web_signature_') || file.startsWith('json_web_key_')) return jwsHandler;
  if (file.startsWith('json_web_encryption_')) return jweHandler;
  return undefined;
}

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  acceptableAccepted: number;
  acceptableRefused: number;
  reasons: Map<string, number>;
  failures: string[];
}

function runFile(file: string): Tally {
  const tally: Tally = {
    passed: 0,
    failed: 0,
    skipped: 0,
    acceptableAccepted: 0,
    acceptableRefused: 0,
    reasons: new Map(),
    failures: [],
  };
  const handler = handlerFor(file);
  const data = JSON.parse(gunzipSync(readFileSync(join(VECTORS, file))).toString('utf8')) as Json;
  for (const group of data.testGroups as Json[]) {
    for (const test of group.tests as Json[]) {
      const outcome: Outcome = handler === undefined ? { skip: 'no handler for this file' } : handler(group, test);
      if ('skip' in outcome) {
        tally.skipped += 1;
        tally.reasons.set(outcome.skip, (tally.reasons.get(outcome.skip) ?? 0) + 1);
      } else if (test.result === 'acceptable') {
        if (outcome.accepted) tally.acceptableAccepted += 1;
        else tally.acceptableRefused += 1;
      } else if (outcome.accepted === (test.result === 'valid')) {
        tally.passed += 1;
      } else {
        tally.failed += 1;
        tally.failures.push(
          `tcId ${test.tcId} (${test.result}${test.comment ? `, ${test.comment}` : ''}) was ${outcome.accepted ? 'accepted' : 'refused'}`,
        );
      }
    }
  }
  return tally;
}

function main(): number {
  if (!existsSync(VECTORS)) {
    console.error(`The Wycheproof vectors are not at ${VECTORS} (shared/wycheproof/vectors beside the repository).`);
    console.log('0 passed, 1 failed');
    return 1;
  }
  const files = readdirSync(VECTORS)
    .filter((f) => f.endsWith('.json.gz'))
    .sort();
  const total = { passed: 0, failed: 0, skipped: 0, acceptable: 0 };
  for (const file of files) {
    const t = runFile(file);
    total.passed += t.passed;
    total.failed += t.failed;
    total.skipped += t.skipped;
    total.acceptable += t.acceptableAccepted + t.acceptableRefused;
    const acceptable =
      t.acceptableAccepted + t.acceptableRefused > 0
        ? `, acceptable: ${t.acceptableAccepted} accepted, ${t.acceptableRefused} refused`
        : '';
    console.log(`${file}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped by design${acceptable}`);
    for (const [reason, n] of t.reasons) console.log(`  skipped by design (${n}): ${reason}`);
    for (const failure of t.failures) console.log(`  FAILED ${failure}`);
  }
  console.log(
    `${files.length} files; ${total.skipped} skipped by design and ${total.acceptable} acceptable, counted apart (neither passed nor failed)`,
  );
  console.log(`${total.passed} passed, ${total.failed} failed`);
  return total.failed === 0 && files.length > 0 ? 0 : 1;
}

process.exitCode = main();
