/**
 * The physical floor of one login, for comparison only: the same two HTTP round trips with
 * node:http and a keep-alive agent, one RS256 verify, one RSA-OAEP private decrypt and the
 * AES-GCM decrypts (after unwrapping each attribute's key when the attributes use an AES key
 * wrap), all with node:crypto directly and no validation beyond what the crypto needs. It is not
 * a client anyone should use.
 */
import {
  constants,
  createDecipheriv,
  createECDH,
  createHash,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { Agent, request } from 'node:http';

/** One floor "client": a keep-alive agent, the RP private key and the provider key. */
export class FloorClient {
  readonly #agent = new Agent({ keepAlive: true });
  readonly #origin: string;
  readonly #privateKey: KeyObject;
  readonly #attributeAlg: string;
  #publicKey: KeyObject | undefined;

  /** @param attributeAlg the attributes' key management: dir (default), A128KW..A256KW or A128GCMKW..A256GCMKW. */
  constructor(origin: string, privateKey: KeyObject, attributeAlg = 'dir') {
    this.#origin = origin;
    this.#privateKey = privateKey;
    this.#attributeAlg = attributeAlg;
  }

  /** Token POST + RS256 verify, then userinfo GET + RSA-OAEP + AES-GCM decrypts. */
  async login(code: string, codeVerifier: string): Promise<Record<string, string>> {
    this.#publicKey ??= await this.#jwks();
    const body = JSON.stringify({ grant_type: 'authorization_code', code, code_verifier: codeVerifier });
    const tokens = (await this.#call('POST', '/v2/oauth/token', body)) as { access_token: string; id_token: string };
    const [h, p, s] = tokens.id_token.split('.') as [string, string, string];
    const ok = verify('sha256', Buffer.from(`${h}.${p}`), this.#publicKey, Buffer.from(s, 'base64url'));
    if (!ok) throw new Error('floor: bad signature');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { sub: string };

    const info = (await this.#call('GET', '/v2/oauth/userinfo', undefined, tokens.access_token)) as {
      key: string;
      data: Record<string, string>;
    };
    const [kh, kek, kiv, kct, ktag] = info.key.split('.') as [string, string, string, string, string];
    const cek = privateDecrypt(
      { key: this.#privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(kek, 'base64url'),
    );
    const jwk = JSON.parse(gcm(cek, kh, kiv, kct, ktag).toString()) as { k: string };
    const blockKey = Buffer.from(jwk.k, 'base64url');
    const data: Record<string, string> = {};
    for (const [scope, jwe] of Object.entries(info.data)) {
      const [dh, dek, div, dct, dtag] = jwe.split('.') as [string, string, string, string, string];
      data[scope] = gcm(this.#attributeKey(blockKey, dh, dek), dh, div, dct, dtag).toString();
    }
    if (claims.sub === '') throw new Error('floor: no sub');
    return data;
  }

  /** The attribute's content key: the block key itself (dir), or unwrapped with it. */
  #attributeKey(blockKey: Buffer, header: string, encryptedKey: string): Buffer {
    const alg = this.#attributeAlg;
    if (alg === 'dir') return blockKey;
    const bits = blockKey.length * 8;
    if (alg.endsWith('GCMKW')) {
      const h = JSON.parse(Buffer.from(header, 'base64url').toString()) as { iv: string; tag: string };
      const d = createDecipheriv(`aes-${bits}-gcm` as 'aes-128-gcm', blockKey, Buffer.from(h.iv, 'base64url'));
      d.setAuthTag(Buffer.from(h.tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(encryptedKey, 'base64url')), d.final()]);
    }
    const d = createDecipheriv(
      `id-aes${bits}-wrap` as 'id-aes128-wrap',
      blockKey,
      Buffer.from('A6A6A6A6A6A6A6A6', 'hex'),
    );
    return Buffer.concat([d.update(Buffer.from(encryptedKey, 'base64url')), d.final()]);
  }

  close(): void {
    this.#agent.destroy();
  }

  async #jwks(): Promise<KeyObject> {
    const set = (await this.#call('GET', '/v2/.well-known/jwks.json')) as { keys: Record<string, string>[] };
    return createPublicKey({ key: set.keys[0]!, format: 'jwk' });
  }

  #call(method: string, path: string, body?: string, bearer?: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { Accept: 'application/json' };
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = Buffer.byteLength(body);
      }
      if (bearer) headers.Authorization = `Bearer ${bearer}`;
      const req = request(this.#origin + path, { method, headers, agent: this.#agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** AES-GCM decrypt of a compact JWE's parts; the protected header is the AAD. */
function gcm(key: Buffer, header: string, iv: string, ciphertext: string, tag: string): Buffer {
  const decipher = createDecipheriv(`aes-${key.length * 8}-gcm` as 'aes-128-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(header, 'ascii'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
}

/** One operation of the FAPI floor: its name, how many times a login needs it, and the operation. */
export type FloorOperation = [name: string, timesPerLogin: number, op: () => unknown];

/**
 * What the FAPI 2.0 profile adds to a login at the least, each part by node:crypto or node:http
 * directly with nothing around it: a P-256 key made (a reused ECDH) and imported as a JWK (the
 * cheapest way on Node 20 that never exports a generated key object), five ES256 signatures (DER,
 * the cheapest form), the ID token's decryption (the ECDH agreement with its ephemeral key, the
 * KDF, the AES key unwrap and the AES-GCM content; the stub's `ECDH-ES+A256KW` and `A256GCM`),
 * and one more keep-alive round trip (to the stub's PAR). `operations` are each part alone (the
 * signatures by a key already used); `login` is all of them as one login does them, with its own
 * new key.
 */
export function fapiFloor(
  origin: string,
  idToken: string,
  idTokenKey: KeyObject,
): { operations: FloorOperation[]; login(): Promise<void> } {
  const generator = createECDH('prime256v1');
  const jwkOf = (point: Buffer) => {
    const scalar = generator.getPrivateKey();
    const d = scalar.length === 32 ? scalar : Buffer.concat([Buffer.alloc(32 - scalar.length), scalar]);
    return {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
      d: d.toString('base64url'),
    };
  };
  const jwk = jwkOf(generator.generateKeys());
  const usedKey = createPrivateKey({ key: jwk, format: 'jwk' });
  const data = Buffer.from('x'.repeat(400));
  sign('sha256', data, usedKey);
  const decryptIdToken = idTokenDecryption(idToken, idTokenKey);
  const agent = new Agent({ keepAlive: true });
  const roundTrip = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${origin}/v2/oauth/par`, { method: 'POST', agent }, (res) => {
        res.on('data', () => undefined);
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end('a=b');
    });
  return {
    operations: [
      ['floor: EC P-256 key made (reused ECDH)', 1, () => generator.generateKeys()],
      ['floor: EC JWK import', 1, () => createPrivateKey({ key: jwk, format: 'jwk' })],
      ['floor: ES256 signature', 5, () => sign('sha256', data, usedKey)],
      ['floor: ID token decryption (agreement, KDF, unwrap, GCM)', 1, decryptIdToken],
      ['floor: keep-alive HTTP round trip', 1, roundTrip],
    ],
    async login() {
      const key = createPrivateKey({ key: jwkOf(generator.generateKeys()), format: 'jwk' });
      for (let i = 0; i < 5; i++) sign('sha256', data, key);
      decryptIdToken();
      await roundTrip();
    },
  };
}

/** The bare decryption of one `ECDH-ES+A256KW` / `A256GCM` compact JWE with `key`: its header read once, beforehand. */
function idTokenDecryption(jwe: string, key: KeyObject): () => Buffer {
  const [h, encryptedKey, iv, ciphertext, tag] = jwe.split('.') as [string, string, string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as {
    alg: string;
    enc: string;
    epk: { x: string; y: string };
  };
  if (header.alg !== 'ECDH-ES+A256KW' || header.enc !== 'A256GCM')
    throw new Error(`the floor decrypts ECDH-ES+A256KW with A256GCM, not ${header.alg} with ${header.enc}`);
  const agreement = createECDH('prime256v1');
  agreement.setPrivateKey(Buffer.from(String(key.export({ format: 'jwk' }).d), 'base64url'));
  const peer = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(header.epk.x, 'base64url'),
    Buffer.from(header.epk.y, 'base64url'),
  ]);
  const algorithmId = Buffer.from(header.alg);
  // Concat KDF's other info: the algorithm, empty apu and apv, 256 bits.
  const otherInfo = Buffer.alloc(4 + algorithmId.length + 4 + 4 + 4);
  otherInfo.writeUInt32BE(algorithmId.length, 0);
  algorithmId.copy(otherInfo, 4);
  otherInfo.writeUInt32BE(256, otherInfo.length - 4);
  const counter = Buffer.from([0, 0, 0, 1]);
  return () => {
    const shared = agreement.computeSecret(peer);
    const kek = createHash('sha256').update(counter).update(shared).update(otherInfo).digest();
    const unwrap = createDecipheriv('id-aes256-wrap', kek, Buffer.from('A6A6A6A6A6A6A6A6', 'hex'));
    const cek = Buffer.concat([unwrap.update(Buffer.from(encryptedKey, 'base64url')), unwrap.final()]);
    return gcm(cek, h, iv, ciphertext, tag);
  };
}
