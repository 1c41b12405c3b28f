/** Starts perf/stub-server.ts in its own process (so its CPU is not counted) and resolves to its origin. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The stub answers for `clientId`, encrypts to `rpPublicKeyPem` and signs ID tokens with `nonce`;
 * with `idTokenKeyPem`, as for a FAPI 2.0 client; `attributeAlg` is the attributes' key management (default dir).
 */
export async function startStub(
  rpPublicKeyPem: string,
  clientId: string,
  nonce: string,
  idTokenKeyPem?: string,
  attributeAlg?: string,
): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...process.execArgv, join(__dirname, 'stub-server.ts')], {
    env: {
      ...process.env,
      BENCH_RP_PUBLIC_KEY: rpPublicKeyPem,
      BENCH_CLIENT_ID: clientId,
      BENCH_NONCE: nonce,
      ...(idTokenKeyPem === undefined ? {} : { BENCH_ID_TOKEN_KEY: idTokenKeyPem }),
      ...(attributeAlg === undefined ? {} : { BENCH_ATTRIBUTE_ALG: attributeAlg }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  for await (const line of createInterface({ input: child.stdout! })) {
    return { origin: (JSON.parse(line) as { origin: string }).origin, child };
  }
  throw new Error('bench stub exited before listening');
}
