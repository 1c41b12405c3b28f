/**
 * `nd-id-provider init --redirect-uri URL`: writes what a relying party needs to start against the
 * provider: an RSA key pair for the client (the app keeps the private key, userinfo is encrypted to
 * the public one) and a `clients.json` registering it with a fresh client secret. Existing files
 * are never replaced unless `--force` is given.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isLoopbackHost } from './config.js';

/** The files `init` writes, by role. */
export const INIT_FILES = Object.freeze({
  privateKey: 'rp-private-key.pem',
  publicKey: 'rp-public-key.pem',
  clients: 'clients.json',
});

/** What `init` was asked to do. */
export interface InitOptions {
  /** The app's callback URL, registered exactly. */
  redirectUri: string;
  /** Folder to write into. Default: the current folder. */
  dir?: string;
  /** Client id to register. Default `my-app`. */
  clientId?: string;
  /** Replace files that exist. */
  force?: boolean;
}

/** What `init` did: the files written, or the mistakes that stopped it (nothing written then). */
export type InitOutcome = { ok: true; files: string[]; clientId: string } | { ok: false; mistakes: string[] };

/** The mistakes of a callback URL, as the provider would see them at start-up. */
function redirectUriMistakes(uri: string): string[] {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return [`--redirect-uri "${uri.slice(0, 200)}" is not an absolute URL (for example http://localhost:3000/auth/callback)`];
  }
  if (url.hash !== '') return ['--redirect-uri must not have a #fragment'];
  if (url.protocol === 'https:') return [];
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return [];
  return ['--redirect-uri must be https, or http on a loopback host (localhost, 127.0.0.1, [::1])'];
}

/** Write the key pair and clients.json for one client. */
export function runInit(options: InitOptions): InitOutcome {
  const clientId = options.clientId ?? 'my-app';
  const mistakes = redirectUriMistakes(options.redirectUri);
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(clientId)) mistakes.push('--client-id must be 1 to 128 characters of A-Z a-z 0-9 . _ -');
  const dir = resolve(options.dir ?? '.');
  const paths = Object.values(INIT_FILES).map((name) => join(dir, name));
  if (!options.force) {
    for (const path of paths) if (existsSync(path)) mistakes.push(`${path} exists; keep it, or pass --force to replace it`);
  }
  if (mistakes.length > 0) return { ok: false, mistakes };

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clients = {
    clients: [
      {
        clientId,
        clientSecret: randomBytes(32).toString('base64url'),
        redirectUris: [options.redirectUri],
        publicKeyFile: INIT_FILES.publicKey,
        name: clientId,
      },
    ],
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, INIT_FILES.privateKey), privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  writeFileSync(join(dir, INIT_FILES.publicKey), publicKey.export({ format: 'pem', type: 'spki' }));
  writeFileSync(join(dir, INIT_FILES.clients), `${JSON.stringify(clients, null, 2)}\n`, { mode: 0o600 });
  return { ok: true, files: paths, clientId };
}
