/**
 * `npx tsx perf/hsm-login.ts`: what keeping the keys in an HSM adds to a FAPI 2.0 login, with
 * SoftHSM2 through PKCS#11 (the recipe of docs/keys.md). Per login the keys do: two client
 * assertions (PAR and token), one ID-token decryption (ECDH-ES+A256KW) and one userinfo block key
 * (RSA-OAEP-256). Each step is timed (wall clock, sequential) with in-process keys and with the
 * same kinds of keys in the token; the difference per login is printed. A measurement, not a
 * target: a network HSM or a cloud KMS adds its round trips on top.
 * Environment: BENCH_ITERATIONS (default 100 logins).
 */
import { createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { CompactEncrypt, SignJWT } from 'jose';
import { createClientAssertion } from '../src/client/client-assertion.js';
import { importIdTokenDecryptionKeys, importSigningKeys } from '../src/client/fapi-keys.js';
import { decryptIdToken } from '../src/client/id-token-jwe.js';
import { decryptUserinfo } from '../src/client/userinfo-crypto.js';
import { importPrivateKeys } from '../src/client/client-options.js';
import { systemClock } from '../src/clock.js';
import { startSoftHsm } from '../test/helpers/softhsm.js';
import { positiveInt } from './env.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 100);

interface Keys {
  assertion: unknown;
  idToken: unknown;
  userinfo: unknown;
  idTokenPublic: KeyObject;
  userinfoPublic: KeyObject;
}

async function tokensFor(keys: Keys): Promise<{ idTokens: string[]; blockKeys: string[] }> {
  const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const inner = await new SignJWT({ sub: 's' }).setProtectedHeader({ alg: 'ES256' }).sign(signer);
  const block = new TextEncoder().encode(JSON.stringify({ kty: 'oct', k: Buffer.alloc(16, 7).toString('base64url') }));
  const idTokens: string[] = [];
  const blockKeys: string[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    idTokens.push(
      await new CompactEncrypt(new TextEncoder().encode(inner))
        .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM' })
        .encrypt(keys.idTokenPublic),
    );
    blockKeys.push(
      await new CompactEncrypt(block)
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
        .encrypt(keys.userinfoPublic),
    );
  }
  return { idTokens, blockKeys };
}

/** Milliseconds per login of each step with these keys. */
async function measure(keys: Keys): Promise<Record<string, number>> {
  const [signing] = importSigningKeys(keys.assertion, 'clientAssertionKey');
  const idTokenKeys = importIdTokenDecryptionKeys(keys.idToken, 'idTokenDecryptionKey');
  const userinfoKeys = importPrivateKeys(keys.userinfo);
  const { idTokens, blockKeys } = await tokensFor(keys);
  const time = async (step: (i: number) => Promise<unknown> | unknown): Promise<number> => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i += 1) await step(i);
    return Number(process.hrtime.bigint() - start) / 1e6 / ITERATIONS;
  };
  return {
    'two client assertions': await time(async () => {
      await createClientAssertion(signing!, 'c', 'https://id.example/v2', systemClock);
      await createClientAssertion(signing!, 'c', 'https://id.example/v2', systemClock);
    }),
    'ID token (ECDH-ES+A256KW)': await time((i) => decryptIdToken(idTokens[i]!, idTokenKeys)),
    'userinfo block key (RSA-OAEP-256)': await time((i) => decryptUserinfo(userinfoKeys, blockKeys[i]!, {})),
  };
}

async function main(): Promise<void> {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const inProcess: Keys = {
    assertion: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    idToken: ec.privateKey,
    userinfo: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }),
    idTokenPublic: ec.publicKey,
    userinfoPublic: rsa.publicKey,
  };
  const hsm = await startSoftHsm();
  hsm.generate('assertion', 'ec-sign');
  hsm.generate('id-token', 'ec-derive');
  hsm.generate('userinfo', 'rsa-decrypt');
  const idToken = hsm.ecDecrypter('id-token', 'enc');
  const userinfo = hsm.rsaDecrypter('userinfo', 'userinfo');
  const held: Keys = {
    assertion: hsm.signer('assertion', 'sig'),
    idToken,
    userinfo,
    idTokenPublic: createPublicKey({ key: idToken.publicJwk as JsonWebKey, format: 'jwk' }),
    userinfoPublic: createPublicKey({ key: userinfo.publicJwk as JsonWebKey, format: 'jwk' }),
  };
  await measure(inProcess); // warm-up
  const a = await measure(inProcess);
  const b = await measure(held);
  let added = 0;
  console.log(`${ITERATIONS} logins, ms per login (wall clock):`);
  for (const step of Object.keys(a)) {
    added += (b[step] ?? 0) - (a[step] ?? 0);
    console.log(`  ${step.padEnd(36)} in process ${a[step]!.toFixed(3)}  SoftHSM2 ${b[step]!.toFixed(3)}`);
  }
  console.log(`PKCS#11 (SoftHSM2) adds ${added.toFixed(2)} ms per FAPI 2.0 login.`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
