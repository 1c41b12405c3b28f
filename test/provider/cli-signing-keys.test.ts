/**
 * The provider's signing keys outlive a restart: `init` writes one per algorithm and names the
 * file in clients.json, so the JWKS a relying party cached (RS256 and the FAPI 2.0 PS256, ES256,
 * EdDSA keys) shows the same `kid`s after the provider is started again. Keys are also taken as
 * JWK JSON text, from a flag's file or the environment.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../../src/provider/cli.js';
import { INIT_FILES } from '../../src/provider/cli-init.js';
import { fapiTestKeys } from '../../src/provider/testing/create-test-provider.js';
import { testKeyPair } from '../helpers/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'nd-id-cli-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ outcome: CliOutcome; err: string }> {
  const err: string[] = [];
  const outcome = await runCli(argv, { stdout: () => undefined, stderr: (t) => err.push(t), env });
  return { outcome, err: err.join('') };
}

/** Starts the provider with `argv`, reads its JWKS `kid`s by algorithm, and stops it. */
async function kidsOf(argv: string[], env: Record<string, string> = {}): Promise<Record<string, string>> {
  const { outcome, err } = await cli([...argv, '--port', '0'], env);
  if (!('started' in outcome)) throw new Error(`did not start: ${err}`);
  try {
    const url = `${outcome.started.provider.issuer}/.well-known/jwks.json`;
    const { keys } = (await (await fetch(url)).json()) as { keys: { kid: string; alg?: string; kty: string }[] };
    return Object.fromEntries(keys.map((k) => [k.alg ?? 'RS256', k.kid]));
  } finally {
    await outcome.stop();
  }
}

/** clients.json with the FAPI clients beside init's own, so the provider signs with every algorithm. */
async function withFapiClients(file: string): Promise<void> {
  const written = JSON.parse(readFileSync(file, 'utf8')) as { clients: object[] };
  const keys = await fapiTestKeys();
  const fapi = (clientId: string, alg: string) => ({
    clientId,
    profile: 'fapi2',
    redirectUris: ['https://app.example/callback'],
    jwks: keys.jwks,
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
    idTokenSignedResponseAlg: alg,
    userinfo: false,
  });
  written.clients.push(fapi('fapi-ps', 'PS256'), fapi('fapi-es', 'ES256'), fapi('fapi-ed', 'EdDSA'));
  writeFileSync(file, JSON.stringify(written));
}

describe('the provider keeps every signing key across restarts', () => {
  it('init writes a key per algorithm, clients.json names it, and a restart shows the same kids', async () => {
    const { outcome } = await cli(['init', '--redirect-uri', 'http://localhost:3000/callback', '--dir', dir]);
    expect(outcome).toEqual({ exitCode: 0 });
    const written = JSON.parse(readFileSync(join(dir, INIT_FILES.providerSigningKeys), 'utf8')) as {
      keys: { alg: string; d?: string }[];
    };
    expect(written.keys.map((k) => k.alg)).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA']);
    const clients = join(dir, INIT_FILES.clients);
    await withFapiClients(clients);
    const first = await kidsOf(['--clients', clients]);
    expect(Object.keys(first).sort()).toEqual(['ES256', 'EdDSA', 'PS256', 'RS256']);
    expect(await kidsOf(['--clients', clients])).toEqual(first);
  });

  it('--signing-keys FILE and ND_ID_SIGNING_KEYS (JWKS JSON text) keep the PS256 kid; ND_ID_SIGNING_KEY takes a JWK', async () => {
    const clients = join(dir, 'clients-flags.json');
    writeFileSync(clients, readFileSync(join(dir, INIT_FILES.clients)));
    const parsed = JSON.parse(readFileSync(clients, 'utf8')) as Record<string, unknown>;
    delete parsed['signingKeysFile'];
    parsed['clients'] = (parsed['clients'] as object[]).map((c, i) =>
      i === 0 ? { ...c, publicKeyFile: join(dir, INIT_FILES.publicKey) } : c,
    );
    writeFileSync(clients, JSON.stringify(parsed));
    const keysFile = join(dir, INIT_FILES.providerSigningKeys);
    const viaFlag = await kidsOf(['--clients', clients, '--signing-keys', keysFile]);
    const viaEnv = await kidsOf(['--clients', clients], { ND_ID_SIGNING_KEYS: readFileSync(keysFile, 'utf8') });
    expect(viaEnv).toEqual(viaFlag);
    expect(Object.keys(viaFlag)).toContain('PS256');
    // Without the keys, a restart rotates: the kids differ.
    expect((await kidsOf(['--clients', clients])).PS256).not.toBe(viaFlag.PS256);

    const jwkText = JSON.stringify(createPrivateKey(testKeyPair('idp').privateKeyPem).export({ format: 'jwk' }));
    const fromJwk = await kidsOf(['--clients', clients], { ND_ID_SIGNING_KEY: jwkText });
    const fromPem = await kidsOf(['--clients', clients], { ND_ID_SIGNING_KEY: testKeyPair('idp').privateKeyPem });
    expect(fromJwk.RS256).toBe(fromPem.RS256);
  });

  it('refuses a key given twice, or a key of the wrong type for its alg, without echoing it', async () => {
    const keysFile = join(dir, INIT_FILES.providerSigningKeys);
    const twice = await cli(['--clients', join(dir, INIT_FILES.clients), '--signing-keys', keysFile]);
    expect(twice.outcome).toEqual({ exitCode: 2 });
    expect(twice.err).toContain('The signing keys is given in --signing-keys and the clients file; keep one');
    const ec = (JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: Record<string, unknown>[] }).keys[2]!;
    const wrong = await cli(['--clients', join(dir, 'clients-flags.json')], {
      ND_ID_SIGNING_KEYS: JSON.stringify({ keys: [{ ...ec, alg: 'PS256' }] }),
    });
    expect(wrong.outcome).toEqual({ exitCode: 2 });
    expect(wrong.err).toContain('signingKeys.keys[0] must be a RSA key for PS256');
    expect(wrong.err).not.toContain(String(ec['d']));
  });
});
