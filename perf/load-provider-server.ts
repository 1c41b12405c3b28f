/**
 * The server side of `npm run load:provider`, in its own process so its CPU time is its own:
 * either our provider (`provider`, auto-approving or interactive) or the floor (`floor`), a bare
 * `node:http` service doing the same cryptography per login with no checks at all. It reports its
 * port, then answers `cpu` messages with its process CPU time in microseconds.
 */
import {
  createCipheriv,
  createHash,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  publicEncrypt,
  randomBytes,
  sign,
  constants,
} from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createProvider,
  DEFAULT_PERSONAS,
  nricCheckLetter,
  type Persona,
  type Provider,
} from '../src/provider/index.js';

interface Start {
  mode: 'provider-auto' | 'provider-interactive' | 'provider-fapi' | 'floor';
  /** The FAPI 2.0 client's public JWKS (`provider-fapi`). */
  jwks?: { keys: Record<string, unknown>[] };
  /** Registered clients in all (the load client and copies of it). Default 1. */
  clients?: number;
  /** Personas in all (`ada` first). Default: the built-in ones. */
  personas?: number;
  /** Pending-authorization bound and lifetime, for the growth scenarios. */
  maxPending?: number;
  authorizationTtl?: number;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  publicKeyPem: string;
}

const ATTRIBUTES = {
  'profile.name': 'ADA LIM',
  'profile.nric_number': 'S1234567D',
  'profile.passport_expiry_date': '2031-05-01',
};

function b64(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * The floor: authorize redirects with a code, token signs an ID token, userinfo encrypts: no
 * validation of anything, but the same cryptography per login as the provider: the pairwise
 * `sub` (HMAC-SHA-256), `at_hash` (SHA-256), the RS256 signature, the RSA-OAEP-256 block key
 * and one AES-GCM per attribute.
 */
function floorServer(start: Start): Server {
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const subjectSecret = randomBytes(32);
  const rpKey = createPublicKey(start.publicKeyPem);
  const header = b64(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'k1' }));
  const body = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let s = '';
      req.on('data', (c: Buffer) => (s += c.toString()));
      req.on('end', () => resolve(s));
    });
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    if (url.startsWith('/v2/oauth/authorize')) {
      const state = new URL(url, 'http://x').searchParams.get('state') ?? '';
      res
        .writeHead(302, {
          location: `${start.redirectUri}?code=${b64(randomBytes(32))}&state=${encodeURIComponent(state)}`,
        })
        .end();
    } else if (url.startsWith('/v2/oauth/token')) {
      await body(req);
      const now = Math.floor(Date.now() / 1000);
      const accessToken = b64(randomBytes(32));
      const sub = createHmac('sha256', subjectSecret).update(`${start.clientId}\u0000ada`, 'utf8').digest('base64url');
      const atHash = createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
      const payload = b64(
        JSON.stringify({
          iss: 'floor',
          sub,
          aud: start.clientId,
          nonce: 'n',
          iat: now,
          exp: now + 600,
          auth_time: now,
          at_hash: atHash,
        }),
      );
      const signature = sign('sha256', Buffer.from(`${header}.${payload}`), signingKey).toString('base64url');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          access_token: accessToken,
          id_token: `${header}.${payload}.${signature}`,
          token_type: 'Bearer',
          expires_in: 600,
        }),
      );
    } else if (url.startsWith('/v2/oauth/userinfo')) {
      const blockKey = randomBytes(16);
      const cek = randomBytes(32);
      const keyHeader = b64(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'client-key' }));
      const encryptedKey = publicEncrypt(
        { key: rpKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
        cek,
      );
      const gcm = (key: Buffer, protectedHeader: string, plaintext: string): string => {
        const iv = randomBytes(12);
        const cipher = createCipheriv(key.length === 32 ? 'aes-256-gcm' : 'aes-128-gcm', key, iv).setAAD(
          Buffer.from(protectedHeader),
        );
        const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        return `${b64(iv)}.${b64(ct)}.${b64(cipher.getAuthTag())}`;
      };
      const key = `${keyHeader}.${b64(encryptedKey)}.${gcm(cek, keyHeader, JSON.stringify({ kty: 'oct', k: b64(blockKey), alg: 'A128GCM' }))}`;
      const dirHeader = b64(JSON.stringify({ alg: 'dir', enc: 'A128GCM' }));
      const data: Record<string, string> = {};
      for (const [name, value] of Object.entries(ATTRIBUTES))
        data[name] = `${dirHeader}..${gcm(blockKey, dirHeader, value)}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sub: 'sub-1', key, data }));
    } else {
      res.writeHead(404).end();
    }
  });
}

/** `n` personas, `ada` first. */
function personas(n: number): Persona[] {
  const out: Persona[] = [DEFAULT_PERSONAS[0]!];
  for (let i = 1; i < n; i++) {
    const digits = String(1_000_000 + i).padStart(7, '0');
    out.push({
      id: `p${i}`,
      'profile.name': `Person ${i}`,
      'profile.nric_number': `S${digits}${nricCheckLetter('S', digits)}`,
      'profile.passport_expiry_date': '2031-01-01',
    });
  }
  return out;
}

let provider: Provider | undefined;

process.on('message', (message: unknown) => {
  const m = message as { type: string; start?: Start; ms?: number };
  if (m.type === 'heap') {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ type: 'heap', bytes: process.memoryUsage().heapUsed });
    return;
  }
  if (m.type === 'advance') {
    provider?.advanceClock(m.ms ?? 0);
    process.send?.({ type: 'advanced' });
    return;
  }
  if (m.type === 'exit') {
    // A clean exit, so a `--cpu-prof` profile is written.
    process.exit(0);
  }
  if (m.type === 'cpu') {
    const u = process.cpuUsage();
    process.send?.({ type: 'cpu', micros: u.user + u.system });
    return;
  }
  if (m.type !== 'start' || !m.start) return;
  const start = m.start;
  let server: Server;
  if (start.mode === 'floor') {
    server = floorServer(start);
  } else {
    // The base URL is only known once listening: the provider app is attached then.
    server = createServer();
  }
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    if (start.mode !== 'floor') {
      const base = {
        clientId: start.clientId,
        clientSecret: start.clientSecret,
        redirectUris: [start.redirectUri],
        publicKey: start.publicKeyPem,
        name: 'Load',
      };
      const { clientSecret: _none, ...withoutSecret } = base;
      const client =
        start.mode === 'provider-fapi'
          ? {
              ...withoutSecret,
              profile: 'fapi2' as const,
              jwks: start.jwks as never,
              idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW' as const,
            }
          : base;
      const others = Array.from({ length: (start.clients ?? 1) - 1 }, (_, i) => ({
        ...client,
        clientId: `other-${i}`,
        name: `Other ${i}`,
      }));
      provider = createProvider({
        baseUrl: `http://127.0.0.1:${port}`,
        clients: [...others.slice(0, others.length >> 1), client, ...others.slice(others.length >> 1)],
        ...(start.personas !== undefined ? { personas: personas(start.personas) } : {}),
        autoApprove: start.mode === 'provider-interactive' ? false : 'ada',
        // One source address drives every login here: the per-address quota would refuse it.
        maxPendingPerAddress: 1_000_000,
        ...(start.maxPending !== undefined ? { maxPending: start.maxPending } : {}),
        ...(start.authorizationTtl !== undefined ? { ttl: { authorization: start.authorizationTtl } } : {}),
        signingKey: generateKeyPairSync('rsa', { modulusLength: 2048 })
          .privateKey.export({ format: 'pem', type: 'pkcs8' })
          .toString(),
      });
      server.on('request', provider.handler);
    }
    process.send?.({ type: 'ready', port });
  });
});
