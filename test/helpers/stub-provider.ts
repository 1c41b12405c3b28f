/**
 * A small token / JWKS / userinfo server over real loopback HTTP, built with jose, for client
 * tests. By default it behaves like a correct provider; each test changes one thing to serve an
 * attack or a fault:
 *
 * - `stub.claims` / `stub.header` / `stub.signWith`: what the next ID token carries;
 * - `stub.userinfo`: sub, attribute values and encryption algorithms of the userinfo answer;
 * - `stub.keys` / `stub.rotate()`: the published signing keys;
 * - `stub.override(path, handler)`: take over an endpoint entirely (hang, 5xx, redirect, ...).
 *
 * It records every request (`stub.requests`) and counts JWKS fetches (`stub.jwksFetches`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  constants,
  createCipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { CompactEncrypt, SignJWT, exportJWK, type JWK } from 'jose';
import { pooledKeyPair, testKeyPair } from './keys.js';
import { importRsaPrivateKey, importRsaPublicKey } from '../../src/keys.js';

/** The paths the stub serves. */
export const STUB_PATHS = {
  token: '/v2/oauth/token',
  userinfo: '/v2/oauth/userinfo',
  jwks: '/v2/.well-known/jwks.json',
} as const;

/** A request the stub received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
}

/** Takes over an endpoint. `body` is the parsed request body. */
export type StubHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A provider signing key. */
export interface SigningKey {
  kid: string | undefined;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** How the userinfo answer is built. */
export interface UserinfoSpec {
  /** `sub` in the answer. Default: the stub's `sub`. */
  sub?: string;
  /** Plaintext attribute values by scope. */
  data: Record<string, string>;
  /** Block key JWE algorithms. Default RSA-OAEP-256 + A256GCM. */
  keyAlg: string;
  keyEnc: string;
  /** Attribute JWE algorithms. Default dir + A128GCM (the block key is AES-128). */
  dataAlg: string;
  dataEnc: string;
  /** Extra protected header fields of the block key JWE and of each attribute JWE. */
  keyHeader?: Record<string, unknown>;
  dataHeader?: Record<string, unknown>;
  /** Public key the block key is encrypted to. Default: the RP's. */
  recipient?: KeyObject;
  /** The `alg` member of the block key's JWK. Default: none. */
  blockKeyAlg?: string;
}

/** Options of {@link startStubProvider}. */
export interface StubProviderOptions {
  clientId?: string;
  /** RP key pair name for {@link testKeyPair}. Default 'rp'. */
  rpKeyName?: string;
  /** Time for `iat`/`exp`, in ms. Default Date.now. */
  clock?: () => number;
}

const DEFAULT_DATA = {
  'profile.name': 'TAN AH KOW',
  'profile.nric_number': 'S9812381D',
  'profile.passport_expiry_date': '2031-05-17',
};

/** A running stub provider. */
export class StubProvider {
  /** `http://127.0.0.1:port` */
  readonly origin: string;
  /** `{origin}/v2` */
  readonly issuer: string;
  readonly clientId: string;
  /** The RP key pair (PEM) the userinfo block key is encrypted to. */
  readonly rp: ReturnType<typeof testKeyPair>;
  /** Requests received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  /** JWKS requests served. */
  jwksFetches = 0;
  /** The `sub` of the user. */
  sub = 'u-7f3a9c';
  /** The access token the token endpoint hands out. */
  accessToken = 'at-' + randomBytes(16).toString('base64url');
  /** The nonce the next ID token carries (set it to what the client sent). */
  nonce: string | undefined;
  /** Claim overrides merged over the defaults; a value of `undefined` removes the claim. */
  claims: Record<string, unknown> = {};
  /** Header overrides of the ID token; `kid: undefined` removes the kid. */
  header: Record<string, unknown> = {};
  /** Signing key of the next ID token. Default: the first published key. */
  signWith: SigningKey | undefined;
  /** Published signing keys. */
  keys: SigningKey[] = [];
  /** How the userinfo answer is built. */
  userinfo: UserinfoSpec;
  /** Time, in ms. */
  clock: () => number;

  readonly #server: Server;
  readonly #overrides = new Map<string, StubHandler>();

  private constructor(server: Server, options: StubProviderOptions) {
    this.#server = server;
    const { port } = server.address() as AddressInfo;
    this.origin = `http://127.0.0.1:${port}`;
    this.issuer = `${this.origin}/v2`;
    this.clientId = options.clientId ?? 'rp-client-1';
    this.rp = testKeyPair(options.rpKeyName ?? 'rp');
    this.clock = options.clock ?? Date.now;
    this.userinfo = {
      data: { ...DEFAULT_DATA },
      keyAlg: 'RSA-OAEP-256',
      keyEnc: 'A256GCM',
      dataAlg: 'dir',
      dataEnc: 'A128GCM',
    };
  }

  /** Start a stub on 127.0.0.1 with one signing key (kid `k1`). */
  static async start(options: StubProviderOptions = {}): Promise<StubProvider> {
    let stub: StubProvider | undefined;
    const server = createServer((req, res) => {
      void stub!.#handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stub = new StubProvider(server, options);
    stub.keys = [await signingKey('k1')];
    return stub;
  }

  /** The RP's private key PEM (PKCS#8). */
  get rpPrivateKeyPem(): string {
    return this.rp.privateKeyPem;
  }

  /** Take over `path` (see {@link STUB_PATHS}); `undefined` restores the default behaviour. */
  override(path: string, handler: StubHandler | undefined): void {
    if (handler) this.#overrides.set(path, handler);
    else this.#overrides.delete(path);
  }

  /** Serve exactly this token-endpoint body (e.g. a hand-made ID token) until overridden again. */
  serveTokens(body: Record<string, unknown>): void {
    this.override(STUB_PATHS.token, (_req, res) => sendJson(res, 200, body));
  }

  /** Publish a new key (kid given, or none) beside or instead of the old ones; returns it. */
  async rotate(kid: string | undefined, { keepOld = true } = {}): Promise<SigningKey> {
    const key = await signingKey(kid);
    this.keys = keepOld ? [...this.keys, key] : [key];
    this.signWith = key;
    return key;
  }

  /** The ID-token claims the stub would sign now (defaults + overrides). */
  idTokenClaims(): Record<string, unknown> {
    const now = Math.floor(this.clock() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.issuer,
      sub: this.sub,
      aud: this.clientId,
      iat: now,
      exp: now + 300,
      at_hash: atHash(this.accessToken),
    };
    if (this.nonce !== undefined) claims.nonce = this.nonce;
    for (const [name, value] of Object.entries(this.claims)) {
      if (value === undefined) delete claims[name];
      else claims[name] = value;
    }
    return claims;
  }

  /** A signed ID token as the stub would serve it now. */
  async idToken(): Promise<string> {
    const key = this.signWith ?? this.keys[0]!;
    const header: Record<string, unknown> = { alg: 'RS256', typ: 'JWT', kid: key.kid, ...this.header };
    for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
    return new SignJWT(this.idTokenClaims()).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
  }

  /** The userinfo body as the stub would serve it now. */
  async userinfoBody(): Promise<{ sub: string; key: string; data: Record<string, string> }> {
    return encryptUserinfo(
      this.userinfo,
      this.userinfo.recipient ?? importRsaPublicKey(this.rp.publicKeyPem),
      this.sub,
    );
  }

  /** Stop listening and drop open connections. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const recorded = await record(req);
      this.requests.push(recorded);
      const override = this.#overrides.get(recorded.path);
      if (recorded.path === STUB_PATHS.jwks) this.jwksFetches += 1;
      if (override) return await override(recorded, res);
      switch (recorded.path) {
        case STUB_PATHS.jwks:
          return sendJson(res, 200, { keys: this.keys.map((k) => k.publicJwk) });
        case STUB_PATHS.token:
          return sendJson(res, 200, { access_token: this.accessToken, id_token: await this.idToken() });
        case STUB_PATHS.userinfo:
          return sendJson(res, 200, await this.userinfoBody());
        default:
          return sendJson(res, 404, { error: 'not_found' });
      }
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: 'server_error', error_description: String(err) });
      else res.destroy();
    }
  }
}

/** Start a stub provider: see {@link StubProvider}. */
export function startStubProvider(options?: StubProviderOptions): Promise<StubProvider> {
  return StubProvider.start(options);
}

/** Send `body` as JSON with `status`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An RS256 signing key no other in this process has (test/helpers/keys.ts); `kid` undefined gives a JWK without kid. */
export async function signingKey(kid: string | undefined): Promise<SigningKey> {
  const pair = pooledKeyPair();
  const privateKey = createPrivateKey(pair.privateKeyPem);
  const jwk = await exportJWK(createPublicKey(pair.publicKeyPem));
  const publicJwk: JWK = { ...jwk, use: 'sig', alg: 'RS256', ...(kid === undefined ? {} : { kid }) };
  return { kid, privateKey, publicJwk };
}

/** BASE64URL of the left half of SHA-256 of the access token. */
export function atHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, 16).toString('base64url');
}

/** Key sizes, in bytes, of each content encryption and key wrap. */
export const JWE_KEY_BYTES: Record<string, number> = {
  A128GCM: 16,
  A192GCM: 24,
  A256GCM: 32,
  'A128CBC-HS256': 32,
  'A192CBC-HS384': 48,
  'A256CBC-HS512': 64,
  A128KW: 16,
  A192KW: 24,
  A256KW: 32,
  A128GCMKW: 16,
  A192GCMKW: 24,
  A256GCMKW: 32,
};

/** Build a userinfo answer `{ sub, key, data }` encrypted as `spec` says, to `recipient`. */
export async function encryptUserinfo(
  spec: UserinfoSpec,
  recipient: KeyObject,
  defaultSub: string,
): Promise<{ sub: string; key: string; data: Record<string, string> }> {
  const size = spec.dataAlg === 'dir' ? JWE_KEY_BYTES[spec.dataEnc] : JWE_KEY_BYTES[spec.dataAlg];
  const secret = randomBytes(size ?? 16);
  const blockJwk = {
    kty: 'oct',
    k: secret.toString('base64url'),
    ...(spec.blockKeyAlg === undefined ? {} : { alg: spec.blockKeyAlg }),
  };
  const plaintext = new TextEncoder().encode(JSON.stringify(blockJwk));
  const header = { alg: spec.keyAlg, enc: spec.keyEnc, ...spec.keyHeader };
  const key =
    spec.keyAlg === 'RSA1_5'
      ? rsa15Jwe(header, plaintext, recipient)
      : await new CompactEncrypt(plaintext).setProtectedHeader(header).encrypt(recipient);
  const data: Record<string, string> = {};
  for (const [scope, value] of Object.entries(spec.data)) {
    data[scope] = await new CompactEncrypt(new TextEncoder().encode(value))
      .setProtectedHeader({ alg: spec.dataAlg, enc: spec.dataEnc, ...spec.dataHeader })
      .encrypt(secret);
  }
  return { sub: spec.sub ?? defaultSub, key, data };
}

/**
 * A compact JWE with `alg: RSA1_5` and `enc: A256GCM`, built by hand: jose 6 no longer writes
 * PKCS#1 v1.5 key transport, and the fuzz needs real ones to show they are refused.
 */
function rsa15Jwe(header: Record<string, unknown>, plaintext: Uint8Array, recipient: KeyObject): string {
  if (header.enc !== 'A256GCM') throw new Error('rsa15Jwe: only enc A256GCM is written by hand');
  const protectedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
  const cek = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', cek, iv);
  cipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const encryptedKey = publicEncrypt({ key: recipient, padding: constants.RSA_PKCS1_PADDING }, cek);
  return [
    protectedHeader,
    ...[encryptedKey, iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString('base64url')),
  ].join('.');
}

/** Import the RP private key of a stub (for tests that need the KeyObject). */
export function rpPrivateKey(stub: StubProvider): KeyObject {
  return importRsaPrivateKey(stub.rp.privateKeyPem);
}

async function record(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const path = new URL(req.url ?? '/', 'http://stub').pathname;
  return { method: req.method ?? 'GET', path, headers: req.headers, body };
}
