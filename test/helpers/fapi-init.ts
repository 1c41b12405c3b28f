/**
 * `nd-id-provider init --profile fapi2` run into a fresh folder, and a bundled provider (autoApprove)
 * registering the client exactly as the `clients.json` it wrote does. Gives the app's keys as
 * init wrote them: the RSA PEM and the private JWKs. Not a test file itself.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from '../../src/provider/cli.js';
import { INIT_FILES } from '../../src/provider/cli-init.js';
import { startProvider, type ProviderClient, type StartedProvider } from './provider.js';

/** What init wrote, and the provider it registers with. */
export interface FapiInit {
  provider: StartedProvider;
  /** The app's RSA private key (`rp-private-key.pem`). */
  rsaPem: string;
  /** The private JWKs of `rp-fapi-private-jwks.json`: `sig` (ES256) and `enc` (ECDH-ES+A256KW). */
  sig: Record<string, unknown>;
  enc: Record<string, unknown>;
  /** The `kid`s of the public key set `clients.json` registers. */
  registeredKids: string[];
  close(): Promise<void>;
}

export async function initFapiProvider(clientId: string, redirectUri: string): Promise<FapiInit> {
  const dir = mkdtempSync(join(tmpdir(), 'nd-id-fapi-init-'));
  try {
    const errors: string[] = [];
    const outcome = await runCli(
      ['init', '--redirect-uri', redirectUri, '--dir', dir, '--client-id', clientId, '--profile', 'fapi2'],
      { stdout: () => undefined, stderr: (text) => errors.push(text), env: {} },
    );
    expect(errors.join('')).toBe('');
    expect(outcome).toMatchObject({ exitCode: 0 });
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    const [sig, enc] = (JSON.parse(read(INIT_FILES.fapiKeys)) as { keys: Record<string, unknown>[] }).keys;
    const registered = (JSON.parse(read(INIT_FILES.clients)) as { clients: Record<string, unknown>[] }).clients[0]!;
    const jwks = registered.jwks as { keys: { kid: string }[] };
    const provider = await startProvider({
      autoApprove: true,
      clients: [
        {
          clientId,
          redirectUris: [redirectUri],
          publicKey: read(INIT_FILES.publicKey),
          profile: 'fapi2',
          jwks,
          idTokenEncryptedResponseAlg: registered.idTokenEncryptedResponseAlg,
        } as ProviderClient,
      ],
    });
    return {
      provider,
      rsaPem: read(INIT_FILES.privateKey),
      sig: sig!,
      enc: enc!,
      registeredKids: jwks.keys.map((k) => k.kid),
      close: () => provider.close(),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
