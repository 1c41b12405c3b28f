/** RSA key pairs for tests, made once per process and shared (generation costs ~50 ms each). */
import { generateKeyPairSync } from 'node:crypto';

export interface TestKeyPair {
  /** PKCS#8 PEM private key. */
  privateKeyPem: string;
  /** PKCS#1 PEM private key (`BEGIN RSA PRIVATE KEY`). */
  privateKeyPkcs1Pem: string;
  /** SPKI PEM public key. */
  publicKeyPem: string;
}

const cache = new Map<string, TestKeyPair>();

/** A 2048-bit RSA key pair, the same one for the same `name` within a process. */
export function testKeyPair(name = 'rp', bits = 2048): TestKeyPair {
  const id = `${name}:${bits}`;
  let pair = cache.get(id);
  if (!pair) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
    pair = {
      privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      privateKeyPkcs1Pem: privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    };
    cache.set(id, pair);
  }
  return pair;
}
