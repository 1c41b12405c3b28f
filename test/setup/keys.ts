/**
 * Global setup: a pool of RSA-2048 key pairs made once per run, beside the other setup, for the
 * test helpers to hand out (test/helpers/keys.ts). Making one costs about a quarter of a second of
 * CPU on a small machine, and the suite would otherwise make hundreds: one per provider started.
 * 24 covers all but a few files, which make the rest themselves.
 * The pool is a file named by `TEST_RSA_KEY_POOL`, which the test processes inherit.
 */
import { generateKeyPair, createPrivateKey } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestKeyPair } from '../helpers/keys.js';

const POOL_SIZE = 24;
const generate = promisify(generateKeyPair);

export async function setup(): Promise<() => void> {
  // Both projects list this setup; the first one's pool serves the whole run.
  const made = process.env.TEST_RSA_KEY_POOL;
  if (made !== undefined && existsSync(made)) return () => undefined;
  const dir = join(__dirname, '..', '..', '.tmp');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rsa-key-pool-${process.pid}.json`);
  const pool = await Promise.all(
    Array.from({ length: POOL_SIZE }, async (): Promise<TestKeyPair> => {
      // Written as PEM by the generation itself: a generated key object is never exported.
      const { privateKey, publicKey } = await generate('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { format: 'pem', type: 'spki' },
        privateKeyEncoding: { format: 'pem', type: 'pkcs8' },
      });
      const pkcs1 = createPrivateKey(privateKey).export({ format: 'pem', type: 'pkcs1' }).toString();
      return { privateKeyPem: privateKey, privateKeyPkcs1Pem: pkcs1, publicKeyPem: publicKey };
    }),
  );
  writeFileSync(file, JSON.stringify(pool), { mode: 0o600 });
  process.env.TEST_RSA_KEY_POOL = file;
  return () => rmSync(file, { force: true });
}
