import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../../../src/provider/cli.js';
import { fapiTestKeys } from '../../../src/provider/testing/create-test-provider.js';
import { testKeyPair } from '../../helpers/keys.js';
import { DpopKey, loginParams, push } from './support.js';

const running: CliOutcome[] = [];
afterAll(async () => {
  for (const outcome of running) if ('started' in outcome) await outcome.stop();
});

describe('nd-id-provider with a FAPI 2.0 client in clients.json', () => {
  it('starts, advertises PAR, and with --dpop-nonce asks for the nonce at PAR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-fapi-cli-'));
    writeFileSync(join(dir, 'rp.pub.pem'), testKeyPair('rp').publicKeyPem);
    const keys = await fapiTestKeys();
    const file = join(dir, 'clients.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          clientId: 'fapi-demo',
          redirectUris: ['http://127.0.0.1:3000/auth/callback'],
          publicKeyFile: 'rp.pub.pem',
          profile: 'fapi2',
          jwks: keys.jwks,
          idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
        },
      ]),
    );
    const out: string[] = [];
    const outcome = await runCli(['--clients', file, '--port', '0', '--auto-approve', '--dpop-nonce'], {
      stdout: (text) => out.push(text),
      stderr: () => undefined,
      env: {},
    });
    running.push(outcome);
    if (!('started' in outcome)) throw new Error(`did not start: ${out.join('')}`);
    const base = outcome.started.baseUrl;
    const doc = (await (await fetch(`${base}/v2/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc['pushed_authorization_request_endpoint']).toBe(`${base}/v2/oauth/par`);
    expect(doc['require_pushed_authorization_requests']).toBe(true);
    const dpop = await DpopKey.make();
    const fake = {
      provider: outcome.started.provider,
      baseUrl: base,
      client: {
        clientId: 'fapi-demo',
        clientSecret: '',
        privateKey: '',
        redirectUri: 'http://127.0.0.1:3000/auth/callback',
        fapi: keys,
      },
    };
    const res = await push(fake as never, dpop, loginParams(fake as never).params);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('use_dpop_nonce');
    expect(res.headers.get('dpop-nonce')).not.toBeNull();
  });

  it("init --profile fapi2 writes the app's private JWKS and a clients.json the provider serves", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-fapi-init-'));
    const out: string[] = [];
    const init = await runCli(
      ['init', '--redirect-uri', 'http://127.0.0.1:3000/auth/callback', '--dir', dir, '--profile', 'fapi2'],
      {
        stdout: (text) => out.push(text),
        stderr: () => undefined,
        env: {},
      },
    );
    expect(init).toEqual({ exitCode: 0 });
    expect(out.join('')).toMatch(/FAPI 2\.0: its private keys are in rp-fapi-private-jwks\.json/);
    const registered = JSON.parse(readFileSync(join(dir, 'clients.json'), 'utf8')) as {
      clients: Record<string, unknown>[];
    };
    expect(registered.clients[0]).toMatchObject({ profile: 'fapi2', idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW' });
    expect(registered.clients[0]!['clientSecret']).toBeUndefined();
    expect(JSON.stringify(registered)).not.toMatch(/"d":/);
    expect(statSync(join(dir, 'rp-fapi-private-jwks.json')).mode & 0o077).toBe(0);
    const keys = JSON.parse(readFileSync(join(dir, 'rp-fapi-private-jwks.json'), 'utf8')) as { keys: JWK[] };
    const started = await runCli(['--clients', join(dir, 'clients.json'), '--port', '0', '--auto-approve'], {
      stdout: () => undefined,
      stderr: () => undefined,
      env: {},
    });
    running.push(started);
    if (!('started' in started)) throw new Error('did not start');
    const fake = {
      provider: started.started.provider,
      baseUrl: started.started.baseUrl,
      client: {
        clientId: 'my-app',
        clientSecret: '',
        privateKey: '',
        redirectUri: 'http://127.0.0.1:3000/auth/callback',
        fapi: { signingKey: keys.keys[0]!, encryptionKey: keys.keys[1]!, jwks: { keys: [] } },
      },
    };
    const dpop = await DpopKey.make();
    expect((await push(fake as never, dpop, loginParams(fake as never).params)).status).toBe(201);
    const refused = await runCli(
      ['init', '--redirect-uri', 'http://127.0.0.1:3000/cb', '--dir', dir, '--profile', 'fapi1', '--force'],
      { stdout: () => undefined, stderr: (t) => out.push(t), env: {} },
    );
    expect(refused).toEqual({ exitCode: 2 });
    expect(out.join('')).toMatch(/--profile must be fapi2/);
  });
});
