/**
 * SoftHSM2 for the tests: a token initialised in a temporary directory (`SOFTHSM2_CONF`), key
 * pairs generated inside it (sensitive, not extractable), and the PKCS#11 recipe of docs/keys.md
 * loaded exactly as the page shows it, to wrap them as signers and decrypters. Debian's
 * `softhsm2` is installed by test/setup/system.ts when missing. Not a test file itself.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pkcs11js from 'pkcs11js';
import type { JweDecrypter, JwsSigner } from '../../src/client.js';
import { docSnippets, repoRoot } from './doc-snippets.js';
import { SOFTHSM_MODULE_PATH } from '../setup/system.js';

/** Where Debian installs SoftHSM2's PKCS#11 module (test/setup/system.ts installs it when missing). */
export const SOFTHSM_MODULE = SOFTHSM_MODULE_PATH;
const TOKEN_LABEL = 'nd-id-test';
const PIN = '246810';

/** The PKCS#11 recipe of docs/keys.md, as the page has it. */
export interface Pkcs11Recipe {
  openToken(library: string, tokenLabel: string, pin: string): { module: pkcs11js.PKCS11; slot: pkcs11js.Handle };
  pkcs11Signer(token: unknown, label: string, kid: string): JwsSigner;
  pkcs11RsaDecrypter(token: unknown, label: string, kid: string, oaep?: 'mechanism' | 'raw'): JweDecrypter;
  pkcs11EcDecrypter(token: unknown, label: string, kid: string): JweDecrypter;
}

/** A token with keys: make them with {@link SoftHsm.generate}, wrap them with the recipe. */
export interface SoftHsm {
  recipe: Pkcs11Recipe;
  token: { module: pkcs11js.PKCS11; slot: pkcs11js.Handle };
  /** Generates a key pair in the token under `label`: RSA 2048 (decrypt) or EC P-256 (sign or derive). */
  generate(label: string, kind: 'rsa-decrypt' | 'ec-sign' | 'ec-derive'): void;
  signer(label: string, kid: string): JwsSigner;
  rsaDecrypter(label: string, kid: string): JweDecrypter;
  ecDecrypter(label: string, kid: string): JweDecrypter;
}

/** The DER OID of P-256 (prime256v1), as CKA_EC_PARAMS takes it. */
const P256_PARAMS = Buffer.from('06082a8648ce3d030107', 'hex');

let started: SoftHsm | undefined;

/**
 * Why SoftHSM2 cannot be used here, or undefined when it can.
 * @param installProblem what the test setup said when installing it failed (`inject('softhsmProblem')`).
 */
export function softHsmProblem(installProblem?: string | null): string | undefined {
  if (installProblem) return installProblem;
  if (!existsSync(SOFTHSM_MODULE))
    return `SoftHSM2 is not installed (${SOFTHSM_MODULE} is missing): run \`apt-get install -y softhsm2\`, then the tests again.`;
  return undefined;
}

/** The process's SoftHSM2 token (one per test process: PKCS#11 is initialised once), made at first use. */
export async function startSoftHsm(installProblem?: string | null): Promise<SoftHsm> {
  if (started !== undefined) return started;
  const problem = softHsmProblem(installProblem);
  if (problem !== undefined) throw new Error(problem);
  const dir = mkdtempSync(join(tmpdir(), 'nd-id-softhsm-'));
  mkdirSync(join(dir, 'tokens'));
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  execFileSync(
    'softhsm2-util',
    ['--init-token', '--free', '--label', TOKEN_LABEL, '--pin', PIN, '--so-pin', `${PIN}0`],
    {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      stdio: 'ignore',
    },
  );
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const recipe = await loadRecipe();
  const token = recipe.openToken(SOFTHSM_MODULE, TOKEN_LABEL, PIN);
  started = {
    recipe,
    token,
    generate: (label, kind) => generateKeyPair(token, label, kind),
    signer: (label, kid) => recipe.pkcs11Signer(token, label, kid),
    // SoftHSM 2.6 (Debian 12 and 13) does OAEP with SHA-1 only: the raw RSA operation in the token, OAEP decoding in process.
    rsaDecrypter: (label, kid) => recipe.pkcs11RsaDecrypter(token, label, kid, 'raw'),
    ecDecrypter: (label, kid) => recipe.pkcs11EcDecrypter(token, label, kid),
  };
  return started;
}

/** Writes the page's PKCS#11 snippet to a module under the repository (so `pkcs11js` resolves) and imports it. */
async function loadRecipe(): Promise<Pkcs11Recipe> {
  const snippet = docSnippets('ts').find((s) => s.file === 'docs/keys.md' && s.kind === 'hsm');
  if (snippet === undefined) throw new Error('docs/keys.md has no snippet marked <!-- readme-test: hsm -->');
  const folder = join(repoRoot, '.tmp', `pkcs11-recipe-${process.pid}`);
  mkdirSync(folder, { recursive: true });
  const file = join(folder, 'recipe.ts');
  writeFileSync(file, snippet.code);
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  return (await import(file)) as Pkcs11Recipe;
}

function generateKeyPair(
  token: { module: pkcs11js.PKCS11; slot: pkcs11js.Handle },
  label: string,
  kind: 'rsa-decrypt' | 'ec-sign' | 'ec-derive',
): void {
  const { module } = token;
  const session = module.C_OpenSession(token.slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    const common = [
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_LABEL, value: label },
    ];
    const secret = [
      ...common,
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: true },
      { type: pkcs11js.CKA_EXTRACTABLE, value: false },
    ];
    if (kind === 'rsa-decrypt') {
      module.C_GenerateKeyPair(
        session,
        { mechanism: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN },
        [
          ...common,
          { type: pkcs11js.CKA_MODULUS_BITS, value: 2048 },
          { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) },
          { type: pkcs11js.CKA_ENCRYPT, value: true },
        ],
        [...secret, { type: pkcs11js.CKA_DECRYPT, value: true }],
      );
    } else {
      module.C_GenerateKeyPair(
        session,
        { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
        [...common, { type: pkcs11js.CKA_EC_PARAMS, value: P256_PARAMS }],
        [...secret, { type: kind === 'ec-sign' ? pkcs11js.CKA_SIGN : pkcs11js.CKA_DERIVE, value: true }],
      );
    }
  } finally {
    module.C_CloseSession(session);
  }
}
