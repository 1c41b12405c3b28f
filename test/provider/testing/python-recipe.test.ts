/**
 * The Python relying party of docs/test-kit.md, run as written with python3 against the provider
 * (auto-approving): it must print the pairwise `sub` of the person it asked for with login_hint.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startProvider, type StartedProvider } from '../../../src/provider/index.js';
import { docSnippets } from '../../helpers/doc-snippets.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'nd-id-python-'));
const started: StartedProvider[] = [];
afterAll(async () => {
  for (const s of started) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const CLIENT = {
  clientId: 'py-rp',
  clientSecret: 'py-rp-secret-0123456789abcdef',
  redirectUris: ['http://127.0.0.1:8000/callback'],
  userinfo: false,
};

describe('the Python relying party of the test-kit guide', () => {
  it('signs in as the person of login_hint and checks the ID token, with the standard library only', async () => {
    const recipes = docSnippets('python').filter((s) => s.file === 'docs/test-kit.md' && s.kind === 'python');
    expect(recipes).toHaveLength(1);
    const script = join(dir, 'sign_in.py');
    writeFileSync(script, recipes[0]!.code);
    const provider = await startProvider({ port: 0, host: '127.0.0.1', autoApprove: true, clients: [CLIENT] });
    started.push(provider);
    const { stdout } = await run('python3', [script], {
      timeout: 20_000,
      env: {
        PATH: process.env['PATH'] ?? '',
        ND_ID_ISSUER: provider.provider.issuer,
        ND_ID_CLIENT_ID: CLIENT.clientId,
        ND_ID_CLIENT_SECRET: CLIENT.clientSecret,
        ND_ID_REDIRECT_URI: CLIENT.redirectUris[0]!,
        ND_ID_PERSONA: 'ben',
      },
    });
    expect(stdout.trim()).toBe(`signed in: sub=${provider.provider.subjectFor(CLIENT.clientId, 'ben')}`);
  });
});
