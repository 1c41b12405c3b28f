/**
 * A code replayed while its first redemption is still at work (signing, fetching the client's
 * encryption key, encrypting) revokes what that redemption issues, over real HTTP. The window is
 * held open for certain: the client's hosted JWKS first lacks its `enc` key, so the first
 * redemption fetches it again, and the JWKS host holds that answer until the replay was refused.
 */
import type { ServerResponse } from 'node:http';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fapiTestKeys, type TestFapiKeys, type TestProvider } from '../../../src/provider/index.js';
import { codeOf, DpopKey, jwksHost, startWithJwksUri, tokenCall } from './support.js';

let keys: TestFapiKeys;
let dpop: DpopKey;
let host: Awaited<ReturnType<typeof jwksHost>>;
let fapi: TestProvider;
/** Answers of the JWKS host, in order; a held one waits for `release`. */
let fetches = 0;
let held: ServerResponse | undefined;
let heldNow: () => void = () => undefined;
const heldAnswer = new Promise<void>((resolve) => {
  heldNow = resolve;
});

beforeAll(async () => {
  keys = await fapiTestKeys();
  dpop = await DpopKey.make();
  const signingOnly = { keys: keys.jwks.keys.filter((k: JWK) => k.use === 'sig') };
  host = await jwksHost((_req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    if (fetches === 1) return res.end(JSON.stringify(signingOnly));
    held = res;
    heldNow();
  });
  fapi = await startWithJwksUri('replayed-while-signing', `${host.origin}/jwks`, keys);
});
afterAll(async () => {
  await fapi?.close();
  await host?.close();
});

describe('a code replayed while its first redemption is still at work', () => {
  it('is refused, and the first redemption then issues nothing (invalid_grant)', async () => {
    const { code, verifier } = await codeOf(fapi, dpop);
    expect(fetches).toBe(1);
    // Past the refetch interval, so the missing enc key is fetched again during the redemption.
    fapi.provider.advanceClock(11_000);
    const first = tokenCall(fapi, dpop, { code, code_verifier: verifier });
    await heldAnswer;
    const replay = await tokenCall(fapi, dpop, { code, code_verifier: verifier });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    held!.end(JSON.stringify(keys.jwks));
    const res = await first;
    const body = (await res.json()) as { error?: string; access_token?: string };
    expect(body.access_token).toBeUndefined();
    expect(res.status).toBe(400);
    expect(body.error).toBe('invalid_grant');
  });
});
