/**
 * RSA key pairs for tests: taken from the run's pool (test/setup/keys.ts) while it lasts, then
 * made here; either way the same one for the same name within a test file's process, and never
 * one handed out earlier in that process.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';

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
 * An RSA-2048 key pair no earlier call in this process returned: the pool's next one, or a new
 * one once the pool is used up (a few files start more providers than it holds) or when the
 * process has no pool (a child process started with an environment of its own).
 */
export function pooledKeyPair(): TestKeyPair {
  if (pool === undefined) {
    const file = process.env.TEST_RSA_KEY_POOL;
    pool = file && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as TestKeyPair[]) : [];
  }
  return next < pool.length ? pool[next++]! : makeKeyPair(2048);
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
