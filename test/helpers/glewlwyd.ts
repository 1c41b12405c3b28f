/**
 * Glewlwyd (Debian's `glewlwyd` package, an OpenID provider written in C), started for a test
 * file on a loopback port in a temporary directory: an SQLite database made from the schema the
 * package ships, one person, an OpenID Connect plugin instance with a PS256, an ES256 and an
 * EdDSA signing key, and the app's clients. Everything is set up through its own REST API, as an
 * administrator would. A person signs in through its login API (a password, then the consent to
 * the client's scopes) and its authorization endpoint, with its session cookie. Not a test file.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, type JsonWebKey, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { GLEWLWYD_PATH } from '../setup/system.js';
import { pooledKeyObjects } from './keys.js';
import { freePort } from './ports.js';
import { stopChild } from './stop-child.js';

/** Where Debian installs the schema of Glewlwyd's SQLite database. */
const SCHEMA = '/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz';
const ADMIN = { username: 'admin', password: 'password' };
const PLUGIN = 'oidc';

/** The ID-token signature algorithms the provider is set up with, one key each. */
export type GlewlwydSigningAlg = 'PS256' | 'ES256' | 'EdDSA';

/** A client registered at the provider (client_secret_post, the code flow). */
export interface GlewlwydClient {
  clientId: string;
  clientSecret: string;
  redirectUris: readonly string[];
  /** The algorithm its ID tokens are signed with. */
  signingAlg: GlewlwydSigningAlg;
  /**
   * An RSA public key (SPKI PEM) its ID tokens are encrypted to, with RSA-OAEP-256 and A256GCM
   * (Glewlwyd's `pubkey` client property). Default: ID tokens signed only.
   */
  idTokenEncryptionKey?: string;
}

/** The person who signs in. */
export const GLEWLWYD_PERSON = { username: 'alice', name: 'Alice Tan', email: 'alice@example.test' } as const;

/** A running Glewlwyd. */
export interface StartedGlewlwyd {
  /** Its issuer: `http://127.0.0.1:<port>/api/oidc`. */
  issuer: string;
  /** Requests it received once set up, by path (`/api/oidc/token`, `/api/oidc/userinfo`, ...). */
  requests: Map<string, number>;
  /**
   * Signs the person in for the authorization URL given (password login, consent to the
   * URL's scopes, the authorization endpoint with the session cookie); returns the URL the
   * provider sends the browser to (the app's callback, with `code`, `state` and `iss`).
   */
  signIn(authorizationUrl: string): Promise<URL>;
  /** What it has written to its console, for a failure's message. */
  output(): string;
  close(): Promise<void>;
}

/** Why Glewlwyd cannot be started here, or null. */
export function glewlwydProblem(): string | null {
  if (existsSync(GLEWLWYD_PATH) && existsSync(SCHEMA)) return null;
  return "The Glewlwyd tests need Debian's glewlwyd package (and sqlite3): run `apt-get install -y glewlwyd sqlite3`.";
}

/**
 * Starts Glewlwyd with the clients given; resolves once its OpenID plugin answers. It listens on
 * a port of its own behind a counting pass-through on the port of its issuer, so a test can
 * tell which of its endpoints the app called.
 */
export async function startGlewlwyd(clients: readonly GlewlwydClient[]): Promise<StartedGlewlwyd> {
  const problem = glewlwydProblem();
  if (problem) throw new Error(problem);
  const counting = await countingPassThrough(await freePort());
  const origin = `http://127.0.0.1:${counting.port}`;
  const issuer = `${origin}/api/${PLUGIN}`;
  const dir = mkdtempSync(join(tmpdir(), 'glewlwyd-'));
  let child: ChildProcess | undefined;
  let output = '';
  const close = async (): Promise<void> => {
    await counting.close();
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    child = launch(dir, counting.upstreamPort, origin, (text) => {
      output = (output + text).slice(-8000);
    });
    await waitUntilUp(child, origin, () => output);
    const admin = await new Session(origin).login(ADMIN.username, ADMIN.password);
    const password = randomBytes(18).toString('base64url');
    await configure(admin, issuer, clients, password);
    counting.requests.clear();
    return {
      issuer,
      requests: counting.requests,
      signIn: (url) => signIn(origin, url, password),
      output: () => output,
      close,
    };
  } catch (err) {
    await close();
    throw new Error(`${(err as Error).message}\nGlewlwyd's output:\n${output}`);
  }
}

/** Its database and configuration in `dir`, then the program, listening on `port`; `keep` gets what it prints. */
function launch(dir: string, port: number, origin: string, keep: (text: string) => void): ChildProcess {
  const database = join(dir, 'glewlwyd.db');
  createDatabase(database);
  writeFileSync(join(dir, 'glewlwyd.conf'), configFile(port, origin, database));
  const child = spawn(GLEWLWYD_PATH, ['-c', join(dir, 'glewlwyd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => keep(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => keep(chunk.toString()));
  return child;
}

/** A loopback pass-through on `port` to a Glewlwyd on another port, counting requests by path. */
async function countingPassThrough(
  port: number,
): Promise<{ port: number; upstreamPort: number; requests: Map<string, number>; close(): Promise<void> }> {
  const upstreamPort = await freePort();
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const upstream = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port,
    upstreamPort,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function createDatabase(path: string): void {
  const schema = gunzipSync(readFileSync(SCHEMA));
  const made = spawnSync('sqlite3', [path], { input: schema, encoding: 'utf8' });
  if (made.status !== 0) {
    throw new Error(`sqlite3 could not create Glewlwyd's database (exit ${made.status}): ${made.stderr ?? made.error}`);
  }
}

function configFile(port: number, origin: string, database: string): string {
  return `port=${port}
bind_address="127.0.0.1"
external_url="${origin}"
api_prefix="api"
log_mode="console"
log_level="WARNING"
cookie_secure=0
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=false
login_api_enabled=true
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm="SHA512"
database = { type = "sqlite3"; path = "${database}"; };
`;
}

async function waitUntilUp(child: ChildProcess, origin: string, output: () => string): Promise<void> {
  const exited = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new Error(`glewlwyd could not be started: ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`glewlwyd exited (code ${code}) before it was ready`)));
  });
  exited.catch(() => undefined);
  for (let i = 0; i < 200; i++) {
    const up = fetch(`${origin}/config/`).then(
      (res) => res.ok,
      () => false,
    );
    if (await Promise.race([up, exited])) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`glewlwyd did not answer on ${origin}:\n${output()}`);
}

/** A client of Glewlwyd's REST API that keeps its session cookie. */
class Session {
  readonly #origin: string;
  #cookie = '';

  constructor(origin: string) {
    this.#origin = origin;
  }

  /** Logs in with a password (POST /api/auth/). */
  async login(username: string, password: string): Promise<this> {
    await this.call('POST', '/api/auth/', { username, password });
    return this;
  }

  /** A call that must answer 200; the session cookie it sets is kept. */
  async call(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await this.send(method, path, body);
    if (res.status !== 200) {
      throw new Error(`Glewlwyd answered ${res.status} to ${method} ${path}: ${(await res.text()).slice(0, 600)}`);
    }
    return res;
  }

  /** Any call, redirects not followed. */
  async send(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await fetch(`${this.#origin}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(this.#cookie === '' ? {} : { cookie: this.#cookie }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const set = res.headers.getSetCookie().find((line) => line.startsWith('GLEWLWYD2_SESSION_ID='));
    if (set !== undefined) this.#cookie = set.split(';')[0] ?? '';
    return res;
  }
}

/** The scope, the person, the OpenID plugin and the clients, through the administration API. */
async function configure(
  admin: Session,
  issuer: string,
  clients: readonly GlewlwydClient[],
  password: string,
): Promise<void> {
  await admin.call('POST', '/api/scope/', {
    name: 'profile',
    display_name: 'Profile',
    description: 'Name and e-mail',
    password_required: false,
    scheme: {},
  });
  await admin.call('POST', '/api/user/', {
    username: GLEWLWYD_PERSON.username,
    name: GLEWLWYD_PERSON.name,
    email: GLEWLWYD_PERSON.email,
    password,
    scope: ['openid', 'profile'],
    enabled: true,
  });
  await storeSigningKidOfClients(admin);
  await admin.call('POST', '/api/mod/plugin/', pluginInstance(issuer));
  for (const client of clients) await admin.call('POST', '/api/client/', clientRecord(client));
}

/**
 * The client store keeps only the properties its `data-format` lists, and the shipped one has
 * no place for the per-client signing key (`sign_kid`): it is added, as an administrator would.
 */
async function storeSigningKidOfClients(admin: Session): Promise<void> {
  const store = (await (await admin.call('GET', '/api/mod/client/database')).json()) as {
    parameters: { 'data-format': Record<string, unknown> };
  };
  store.parameters['data-format'].sign_kid = { multiple: false, read: true, write: true };
  await admin.call('PUT', '/api/mod/client/database', store);
  await admin.call('PUT', '/api/mod/client/database/reset');
}

/** A signing key of each algorithm, as Glewlwyd's `jwks-private` takes them (kid = the algorithm). */
function signingKeys(): { keys: JsonWebKey[] } {
  const rsa = pooledKeyObjects().privateKey.export({ format: 'jwk' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return {
    keys: [
      { ...rsa, kid: 'PS256', alg: 'PS256', use: 'sig' },
      { ...ec, kid: 'ES256', alg: 'ES256', use: 'sig' },
      { ...ed, kid: 'EdDSA', alg: 'EdDSA', use: 'sig' },
    ],
  };
}

/** The OpenID Connect plugin: the code flow with PKCE, `iss` in the response, encryption to a client's key. */
function pluginInstance(issuer: string): Record<string, unknown> {
  return {
    module: 'oidc',
    name: PLUGIN,
    display_name: 'OpenID Connect',
    enabled: true,
    parameters: {
      iss: issuer,
      'jwks-private': JSON.stringify(signingKeys()),
      'default-kid': 'PS256',
      'client-sign_kid-parameter': 'sign_kid',
      'jwks-show': true,
      'code-duration': 600,
      'refresh-token-duration': 3600,
      'access-token-duration': 3600,
      'allow-non-oidc': false,
      'auth-type-code-enabled': true,
      'auth-type-refresh-enabled': false,
      'pkce-allowed': true,
      'pkce-method-plain-allowed': false,
      'oauth-as-iss-id': true,
      'name-claim': 'mandatory',
      'email-claim': 'mandatory',
      'encrypt-out-token-allow': true,
      'client-pubkey-parameter': 'pubkey',
      'client-enc-parameter': 'enc',
      'client-alg-parameter': 'alg',
      'client-encrypt_id_token-parameter': 'encrypt_id_token',
    },
  };
}

function clientRecord(client: GlewlwydClient): Record<string, unknown> {
  return {
    client_id: client.clientId,
    name: client.clientId,
    client_secret: client.clientSecret,
    confidential: true,
    enabled: true,
    redirect_uri: [...client.redirectUris],
    authorization_type: ['code'],
    token_endpoint_auth_method: ['client_secret_post'],
    sign_kid: client.signingAlg,
    ...(client.idTokenEncryptionKey === undefined
      ? {}
      : { pubkey: client.idTokenEncryptionKey, alg: 'RSA-OAEP-256', enc: 'A256GCM', encrypt_id_token: '1' }),
  };
}

/**
 * The person's side: a password login (which sets the session cookie), consent to the scopes
 * the URL asks for, then the authorization endpoint with the cookie, which redirects to the app.
 */
async function signIn(origin: string, authorizationUrl: string, password: string): Promise<URL> {
  const url = new URL(authorizationUrl);
  const clientId = url.searchParams.get('client_id') ?? '';
  const person = await new Session(origin).login(GLEWLWYD_PERSON.username, password);
  await person.call('PUT', `/api/auth/grant/${encodeURIComponent(clientId)}`, {
    scope: url.searchParams.get('scope') ?? 'openid',
  });
  url.searchParams.set('g_continue', '');
  const res = await person.send('GET', url.pathname + url.search);
  const location = res.headers.get('location');
  if (res.status !== 302 || location === null) {
    throw new Error(`Glewlwyd's authorization endpoint answered ${res.status}: ${(await res.text()).slice(0, 400)}`);
  }
  return new URL(location, url);
}
