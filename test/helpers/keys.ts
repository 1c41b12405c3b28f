/**
 * RSA key pairs for tests: taken from the run's pool (test/setup/keys.ts) when the process has
 * one, else made here; either way the same one for the same name within a process.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface TestKeyPair {
  /** PKCS#8 PEM private key. */
  privateKeyPem: string;
  /** PKCS#1 PEM private key (`BEGIN RSA PRIVATE KEY`). */
  privateKeyPkcs1Pem: string;
  /** SPKI PEM public key. */
  publicKeyPem: string;
}

const cache = new Map<string, TestKeyPair>();
let pool: TestKeyPair[] | undefined;
let next = 0;

/** A 2048-bit RSA key pair, the same one for the same `name` within a process. */
export function testKeyPair(name = 'rp', bits = 2048): TestKeyPair {
  const id = `${name}:${bits}`;
  let pair = cache.get(id);
  if (!pair) {
    pair = bits === 2048 ? pooledKeyPair() : makeKeyPair(bits);
    cache.set(id, pair);
  }
  return pair;
}

/**
 * An RSA-2048 key pair no earlier call in this process returned, while the pool lasts (16); then
 * the pool's again, in the same order. Made here when the process has no pool.
 */
export function pooledKeyPair(): TestKeyPair {
  if (pool === undefined) {
    const file = process.env.TEST_RSA_KEY_POOL;
    pool = file ? (JSON.parse(readFileSync(file, 'utf8')) as TestKeyPair[]) : [];
  }
  if (pool.length === 0) return makeKeyPair(2048);
  return pool[next++ % pool.length]!;
}

/** {@link pooledKeyPair} as key objects. */
export function pooledKeyObjects(): { privateKey: KeyObject; publicKey: KeyObject } {
  const pair = pooledKeyPair();
  return { privateKey: createPrivateKey(pair.privateKeyPem), publicKey: createPublicKey(pair.publicKeyPem) };
}

function makeKeyPair(bits: number): TestKeyPair {
  // Written as PEM by the generation itself: a generated key object is never exported.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { format: 'pem', type: 'spki' },
    privateKeyEncoding: { format: 'pem', type: 'pkcs8' },
  });
  const pkcs1 = createPrivateKey(privateKey).export({ format: 'pem', type: 'pkcs1' }).toString();
  return { privateKeyPem: privateKey, privateKeyPkcs1Pem: pkcs1, publicKeyPem: publicKey };
}
