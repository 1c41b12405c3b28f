/**
 * The library's own JOSE code, behind a small interface: verify a compact JWS with a given key and
 * algorithm, decrypt a compact JWE with the app's keys, sign a compact JWS, and the RFC 7638
 * thumbprint; beside them the algorithm tables and the checks every key passes. Everything in
 * this folder runs on node:crypto, synchronously; nothing else in `src/` (the provider aside, which
 * keeps jose) calls node:crypto's signature, cipher, key-agreement or RSA-encryption functions
 * (`test/jose/crypto-calls.test.ts` holds it to that). `npm run wycheproof` drives Project
 * Wycheproof's vectors through these functions.
 */
export {
  isJwsAlgorithm,
  JWS_ALGORITHMS,
  type JwsAlgorithm,
  keyFitsAlgorithm,
  verifyCompactJws,
  verifySignature,
} from './jws-verify.js';
export {
  type AssertionAlgorithm,
  encodeJwsHeader,
  signCompactJwt as signCompactJws,
  signWithHeader,
} from './jws-sign.js';
export { openCompactJws } from './jws-open.js';
export { decryptCompactJwe, type JweAllowlists, type JweDecryptionKey } from './jwe.js';
export { appKeyCandidates, decryptWithAppKeys, type AppDecryptionKey } from './jwe-app-keys.js';
export { jwkThumbprint as thumbprint, rsaThumbprint } from './thumbprint.js';
export { MIN_RSA_BITS, rsaKeyProblem } from './rsa-key.js';
export { importVerificationJwk, type VerificationJwk } from './jwk.js';
export { strictBase64url } from './base64url.js';
export { JweRefused, type JweRefusal } from './refused.js';
export {
  aesCbcDecrypt,
  aesGcmDecrypt,
  aesKeyUnwrap,
  CONTENT_ENCRYPTIONS,
  rsaOaepUnwrap,
} from './jwe-decrypt.js';
export { ECDH_ES_ALGORITHMS, ecdhSharedSecret } from './jwe-ecdh.js';
export { derToJose, joseToDer } from './ecdsa.js';
