/**
 * `nd-id-provider init --redirect-uri URL`: a client key pair and a `clients.json` registering it
 * (with `--profile fapi2`: EC signing and encryption keys as JWKS, no secret), and the provider's
 * own signing keys, which clients.json names so every restart keeps them. Existing files are
 * replaced only with `--force`, and always through a new file renamed into place (see writeNewFile).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fchmodSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { generateEcJwkPair } from '../keys.js';
import { isLoopbackHost } from '../loopback.js';

/** The files `init` writes, by role. */
export const INIT_FILES = Object.freeze({
  privateKey: 'rp-private-key.pem',
  publicKey: 'rp-public-key.pem',
  clients: 'clients.json',
  /** With `--profile fapi2`: the app's private signing and encryption keys (a JWKS). */
  fapiKeys: 'rp-fapi-private-jwks.json',
  /** The provider's own ID-token signing keys, one per algorithm it signs with (a private JWKS), so a restart keeps every `kid`. */
  providerSigningKeys: 'provider-signing-keys.json',
});

/** A private JWK of the provider's signing key for `alg`, with its `alg` and `use`. */
function providerKey(alg: 'RS256' | 'PS256' | 'ES256' | 'EdDSA'): object {
  const meta = { alg, use: 'sig' };
  if (alg === 'ES256') return { ...generateEcJwkPair('P-256').privateJwk, ...meta };
  // Encoded by the key generation itself (see the note on the RSA pair in runInit).
  const encoding = { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } } as const;
  const { privateKey } =
    alg === 'EdDSA'
      ? generateKeyPairSync('ed25519', encoding)
      : generateKeyPairSync('rsa', { modulusLength: 2048, ...encoding });
  return { ...privateKey, ...meta };
}

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
  /** `'fapi2'`: register the client in the FAPI 2.0 profile, with its EC keys. */
  profile?: 'fapi2';
}

/** One EC P-256 key pair as private and public JWKs, with a `kid`, `use` and `alg`. */
function ecKey(kid: string, use: 'sig' | 'enc', alg: string): { privateJwk: object; publicJwk: object } {
  const { privateJwk, publicJwk } = generateEcJwkPair('P-256');
  const meta = { kid, use, alg };
  return { privateJwk: { ...privateJwk, ...meta }, publicJwk: { ...publicJwk, ...meta } };
}

/** What `init` did: the files written, or the mistakes that stopped it (nothing written then). */
export type InitOutcome =
  | { ok: true; files: string[]; clientId: string; backchannelLogoutUri?: string }
  | { ok: false; mistakes: string[] };

/**
 * The back-channel logout URI beside a callback URI ending in `/callback` (the router's default
 * routes: `{mount}/backchannel-logout`), or undefined for another callback path.
 */
export function backchannelLogoutUriBeside(redirectUri: string): string | undefined {
  const url = new URL(redirectUri);
  if (!url.pathname.endsWith('/callback') || url.search !== '') return undefined;
  url.pathname = `${url.pathname.slice(0, -'/callback'.length)}/backchannel-logout`;
  return url.href;
}

/** The mistakes of a callback URL, as the provider would see them at start-up. */
function redirectUriMistakes(uri: string): string[] {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return [
      `--redirect-uri "${uri.slice(0, 200)}" is not an absolute URL (for example http://localhost:3000/auth/callback)`,
    ];
  }
  if (url.hash !== '') return ['--redirect-uri must not have a #fragment'];
  if (url.protocol === 'https:') return [];
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return [];
  return ['--redirect-uri must be https, or http on a loopback host (localhost, 127.0.0.1, [::1])'];
}

/** Mode of the files holding a secret (private keys, clients.json): the owner only. */
const SECRET_MODE = 0o600;
/** Mode of the public key file. */
const PUBLIC_MODE = 0o644;

/**
 * Writes `data` through a new file opened with O_CREAT|O_EXCL (never an existing file, nor a
 * planted symlink) with `mode`, renamed over `path` (replacing a symlink, not its target).
 */
function writeNewFile(path: string, data: string | Buffer, mode: number): void {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', mode);
  try {
    try {
      fchmodSync(fd, mode); // the exact mode, whatever the umask left of it
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

/** Write the key pair and clients.json for one client. */
export function runInit(options: InitOptions): InitOutcome {
  const clientId = options.clientId ?? 'my-app';
  const mistakes = redirectUriMistakes(options.redirectUri);
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(clientId))
    mistakes.push('--client-id must be 1 to 128 characters of A-Z a-z 0-9 . _ -');
  const dir = resolve(options.dir ?? '.');
  const fapi = options.profile === 'fapi2';
  const paths = Object.values(INIT_FILES)
    .filter((name) => fapi || name !== INIT_FILES.fapiKeys)
    .map((name) => join(dir, name));
  if (!options.force) {
    for (const path of paths)
      if (existsSync(path)) mistakes.push(`${path} exists; keep it, or pass --force to replace it`);
  }
  if (mistakes.length > 0) return { ok: false, mistakes };

  // Encoded by the key generation itself: exporting a key object fresh from generateKeyPairSync
  // can deadlock Node 20 (see generateEcJwkPair).
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { format: 'pem', type: 'spki' },
    privateKeyEncoding: { format: 'pem', type: 'pkcs8' },
  });
  const day = new Date().toISOString().slice(0, 10);
  const sig = fapi ? ecKey(`sig-${day}`, 'sig', 'ES256') : undefined;
  const enc = fapi ? ecKey(`enc-${day}`, 'enc', 'ECDH-ES+A256KW') : undefined;
  const registration =
    sig !== undefined && enc !== undefined
      ? {
          profile: 'fapi2',
          jwks: { keys: [sig.publicJwk, enc.publicJwk] },
          idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
        }
      : { clientSecret: randomBytes(32).toString('base64url') };
  const backchannelLogoutUri = backchannelLogoutUriBeside(options.redirectUri);
  const clients = {
    // The provider keeps its signing keys in this file, read at every start.
    signingKeysFile: INIT_FILES.providerSigningKeys,
    clients: [
      {
        clientId,
        redirectUris: [options.redirectUri],
        publicKeyFile: INIT_FILES.publicKey,
        name: clientId,
        ...registration,
        ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }),
      },
    ],
  };
  mkdirSync(dir, { recursive: true });
  if (sig !== undefined && enc !== undefined) {
    writeNewFile(
      join(dir, INIT_FILES.fapiKeys),
      `${JSON.stringify({ keys: [sig.privateJwk, enc.privateJwk] }, null, 2)}\n`,
      SECRET_MODE,
    );
  }
  const signingKeys = { keys: (['RS256', 'PS256', 'ES256', 'EdDSA'] as const).map(providerKey) };
  writeNewFile(join(dir, INIT_FILES.providerSigningKeys), `${JSON.stringify(signingKeys, null, 2)}\n`, SECRET_MODE);
  writeNewFile(join(dir, INIT_FILES.privateKey), privateKey, SECRET_MODE);
  writeNewFile(join(dir, INIT_FILES.publicKey), publicKey, PUBLIC_MODE);
  writeNewFile(join(dir, INIT_FILES.clients), `${JSON.stringify(clients, null, 2)}\n`, SECRET_MODE);
  return { ok: true, files: paths, clientId, ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }) };
}
