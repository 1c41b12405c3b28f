/**
 * A DPoP nonce belongs to the login that learned it (the race class of CVE-2026-40155): two
 * logins of one IdClient run at once against the provider with `dpopNonce`, and every proof the
 * provider receives carries either no nonce or one the provider gave to a request signed by that
 * same key. Real HTTP on loopback; the provider's requests are watched, not mocked.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import type { IdClient } from '../../src/client/id-client.js';
import { startProvider } from '../helpers/provider.js';
import { appKeys, fapiIdClient, fapiRegistration, idClientFapiLogin } from './harness.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

interface Proof {
  jkt: string;
  path: string;
  nonce: string | undefined;
}

/** Watches the provider: each DPoP proof (its key, path and nonce), and which keys each nonce was handed to. */
function watch(server: {
  on(event: 'request', listener: (req: IncomingMessage, res: ServerResponse) => void): unknown;
}) {
  const proofs: Proof[] = [];
  const handedTo = new Map<string, Set<string>>();
  server.on('request', (req, res) => {
    const header = req.headers.dpop;
    if (typeof header !== 'string') return;
    const jwk = decodeProtectedHeader(header).jwk as JWK;
    const nonce = decodeJwt(header).nonce;
    const seen = calculateJwkThumbprint(jwk, 'sha256');
    // The provider writes its headers in one writeHead call, as an object or as a flat
    // [name, value, ...] list: read the DPoP-Nonce it hands out there.
    let given: unknown;
    type Headers = Record<string, unknown> | unknown[];
    const writeHead = res.writeHead.bind(res) as (status: number, headers?: Headers) => ServerResponse;
    (res as { writeHead: unknown }).writeHead = (status: number, headers?: Headers) => {
      const pairs: [unknown, unknown][] = Array.isArray(headers)
        ? headers.flatMap((item, i) => (i % 2 === 0 ? [[item, headers[i + 1]] as [unknown, unknown]] : []))
        : Object.entries(headers ?? {});
      given = pairs.find(([name]) => String(name).toLowerCase() === 'dpop-nonce')?.[1];
      return writeHead(status, headers);
    };
    res.on('finish', () => {
      void seen.then((jkt) => {
        proofs.push({ jkt, path: String(req.url), nonce: typeof nonce === 'string' ? nonce : undefined });
        if (typeof given === 'string') handedTo.set(given, (handedTo.get(given) ?? new Set()).add(jkt));
      });
    });
  });
  return { proofs, handedTo };
}

/** One login of `client` up to the attributes, with a pause after its push (so another can start meanwhile). */
async function login(client: IdClient, afterPush: () => Promise<void> = async () => undefined): Promise<string> {
  const { tokens, dpopKey } = await idClientFapiLogin(client, `s-${randomUUID().slice(0, 8)}`, afterPush);
  const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken, dpopKey });
  expect(info.data['profile.name']).toBeTypeOf('string');
  return dpopKey.jkt;
}

describe('DPoP nonces of concurrent logins', () => {
  it('never sends a nonce learned by one login in another login’s proof', async () => {
    const keys = appKeys();
    const callback = 'http://127.0.0.1:3998/auth/callback';
    const provider = await startProvider({
      autoApprove: true,
      dpopNonce: true,
      clients: [fapiRegistration(keys, callback)],
    } as Parameters<typeof startProvider>[0]);
    cleanup = () => provider.close();
    const { proofs, handedTo } = watch(provider.server);
    const client = fapiIdClient(keys, provider.baseUrl, callback);
    try {
      // Login A learns the provider's nonce at its push; login B starts then, and both finish together.
      let other: Promise<string> | undefined;
      const first = login(client, async () => {
        other = login(client);
        await new Promise((resolve) => setTimeout(resolve, 0));
      });
      const [a, b] = await Promise.all([first, first.then(() => other!)]);
      expect(a).not.toBe(b);
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const proof of proofs) {
        if (proof.nonce === undefined) continue;
        expect(
          handedTo.get(proof.nonce)?.has(proof.jkt),
          `${proof.path}: a nonce handed only to another login's key`,
        ).toBe(true);
      }
      // B's first proof (its push) carries no nonce: it has learned none yet, and A's is not B's.
      const ofB = proofs.filter((p) => p.jkt === b);
      expect(ofB.find((p) => p.path.startsWith('/v2/oauth/par'))?.nonce).toBeUndefined();
      // B met the challenge once (its push, answered with its one retry), then used the nonce it learned.
      expect(ofB.length).toBe(4);
      expect(ofB.filter((p) => p.nonce !== undefined).length).toBe(3);
    } finally {
      client.close();
    }
  });
});
