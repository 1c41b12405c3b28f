/**
 * Bench stub provider, run as a child process so its CPU never counts against the relying
 * party. Every response is computed once at start-up and then served as fixed bytes.
 *
 * Input (environment): BENCH_RP_PUBLIC_KEY (SPKI PEM), BENCH_CLIENT_ID, BENCH_NONCE; with
 * BENCH_ID_TOKEN_KEY (an SPKI PEM EC key) it answers as for a FAPI 2.0 client: a DPoP token
 * type, the ID token encrypted to that key (ECDH-ES+A256KW, A256GCM), and a PAR endpoint whose
 * request_uri ends with the pushed state (URL-encoded). BENCH_ATTRIBUTE_ALG (default `dir`) is the
 * key management of the attribute JWEs (A128GCM content); the block key has the size it takes.
 * Nothing the client sends is checked: the bench measures the relying party only.
 * Output: one JSON line on stdout, `{ "origin": "http://127.0.0.1:PORT" }`, once listening.
 * `GET /stats` returns request counts per path; `POST /stats/reset` zeroes them.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactEncrypt, SignJWT, exportJWK } from 'jose';

/** The attributes of one login, as the bench decrypts them. */
export const BENCH_ATTRIBUTES: Record<string, string> = {
  'profile.name': 'TAN AH KOW',
  'profile.nric_number': 'S9812381D',
  'profile.passport_expiry_date': '2031-05-17',
};

async function main(): Promise<void> {
  const rpPublicKey = createPublicKey(required('BENCH_RP_PUBLIC_KEY'));
  const clientId = required('BENCH_CLIENT_ID');
  const nonce = required('BENCH_NONCE');

  // A FAPI client (an ID-token key given) is answered as the profile requires: PS256, encrypted.
  const encKey = process.env.BENCH_ID_TOKEN_KEY;
  const fapi = encKey !== undefined && encKey !== '';
  const idTokenAlg = fapi ? 'PS256' : 'RS256';
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(await exportJWK(signing.publicKey)), kid: 'bench-1', use: 'sig', alg: idTokenAlg };

  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/v2`;

  const accessToken = randomBytes(32).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const idToken = await new SignJWT({
    nonce,
    at_hash: createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url'),
  })
    .setProtectedHeader({ alg: idTokenAlg, typ: 'JWT', kid: 'bench-1' })
    .setIssuer(issuer)
    .setSubject('bench-user-1')
    .setAudience(clientId)
    .setIssuedAt(now - 5)
    .setExpirationTime(now + 24 * 3600)
    .sign(signing.privateKey);

  const attributeAlg = process.env.BENCH_ATTRIBUTE_ALG || 'dir';
  const blockKey = randomBytes(attributeAlg === 'dir' ? 16 : Number(attributeAlg.slice(1, 4)) / 8);
  const key = await new CompactEncrypt(Buffer.from(JSON.stringify({ kty: 'oct', k: blockKey.toString('base64url') })))
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
    .encrypt(rpPublicKey);
  const data: Record<string, string> = {};
  for (const [scope, value] of Object.entries(BENCH_ATTRIBUTES)) {
    data[scope] = await new CompactEncrypt(Buffer.from(value))
      .setProtectedHeader({ alg: attributeAlg, enc: 'A128GCM' })
      .encrypt(blockKey);
  }

  const sentIdToken = fapi
    ? await new CompactEncrypt(Buffer.from(idToken))
        .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', cty: 'JWT' })
        .encrypt(createPublicKey(encKey))
    : idToken;
  const bodies = new Map<string, Buffer>([
    [
      '/v2/oauth/token',
      json({
        access_token: accessToken,
        token_type: fapi ? 'DPoP' : 'Bearer',
        expires_in: 3600,
        id_token: sentIdToken,
      }),
    ],
    [
      '/v2/.well-known/openid-configuration',
      json({
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        userinfo_endpoint: `${issuer}/oauth/userinfo`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        pushed_authorization_request_endpoint: `${issuer}/oauth/par`,
        authorization_response_iss_parameter_supported: true,
        id_token_signing_alg_values_supported: [idTokenAlg],
      }),
    ],
    ['/v2/oauth/userinfo', json({ sub: 'bench-user-1', key, data })],
    ['/v2/.well-known/jwks.json', json({ keys: [jwk] })],
  ]);
  const counts: Record<string, number> = {};

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/stats') return send(res, 200, json(counts));
    if (path === '/stats/reset') {
      for (const k of Object.keys(counts)) delete counts[k];
      return send(res, 200, json({}));
    }
    counts[path] = (counts[path] ?? 0) + 1;
    if (path === '/v2/oauth/par') {
      // The request_uri names the pushed state, so a driver can answer the callback the way the
      // service would without seeing the pushed parameters.
      const state = new URLSearchParams(Buffer.concat(chunks).toString('latin1')).get('state') ?? '';
      return send(
        res,
        201,
        json({ request_uri: `urn:ietf:params:oauth:request_uri:${encodeURIComponent(state)}`, expires_in: 60 }),
      );
    }
    const body = bodies.get(path);
    if (body) send(res, 200, body);
    else send(res, 404, json({ error: 'not_found' }));
  }

  process.stdout.write(JSON.stringify({ origin }) + '\n');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench stub: ${name} is not set`);
  return value;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench stub failed: ${String(err)}\n`);
    process.exit(1);
  });
}
