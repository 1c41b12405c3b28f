/**
 * A FAPI client's hosted JWKS (`jwksUri`) that cannot be had, over real HTTP: a tiny JWKS server
 * on 127.0.0.1 answers 500, never answers, redirects, or answers more than 64 KiB. Each time the
 * assertion is refused at PAR and at token (`invalid_client`, 401) with a sentence naming the
 * cause, and the second request within the refetch interval gets the same answer without a
 * second fetch (so nothing waits twice). Every failing answer carries the client's real keys, so
 * only the rule under test refuses it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fapiTestKeys, type TestFapiKeys, type TestProvider } from '../../../src/provider/index.js';
import { freePort } from '../../helpers/ports.js';
import { DpopKey, jwksHost, loginParams, push, startWithJwksUri, tokenCall } from './support.js';

/** The JWKS server's answer per path; `hits` counts the requests per path. */
const hits = new Map<string, number>();
let keys: TestFapiKeys;
let jwks: { keys: JWK[] };
let server: Server;
let origin: string;
let dpop: DpopKey;

function answer(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  res.setHeader('content-type', 'application/json');
  if (path === '/error') {
    res.statusCode = 500;
    res.end(JSON.stringify(jwks));
  } else if (path === '/silent') {
    // Never answers: the connection stays open until the test closes it.
  } else if (path === '/moved') {
    res.statusCode = 302;
    res.setHeader('location', `${origin}/good`);
    res.end();
  } else if (path === '/large') {
    res.end(JSON.stringify({ ...jwks, padding: 'x'.repeat(70 * 1024) }));
  } else {
    res.end(JSON.stringify(jwks));
  }
}

beforeAll(async () => {
  keys = await fapiTestKeys();
  jwks = keys.jwks;
  dpop = await DpopKey.make();
  server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A provider whose one FAPI client's keys are at `path` of the JWKS server. */
async function withJwksAt(path: string, run: (fapi: TestProvider) => Promise<void>): Promise<void> {
  const fapi = await startWithJwksUri(`client${path.replace('/', '-')}`, `${origin}${path}`, keys);
  try {
    await run(fapi);
  } finally {
    await fapi.close();
  }
}

/** PAR then token as the client: both refused with invalid_client (401); their descriptions. */
async function refusedTwice(fapi: TestProvider): Promise<string[]> {
  const descriptions: string[] = [];
  for (const res of [
    await push(fapi, dpop, loginParams(fapi).params),
    await tokenCall(fapi, dpop, { code: 'unused', code_verifier: 'v'.repeat(43) }),
  ]) {
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    descriptions.push(body.error_description);
  }
  return descriptions;
}

describe('a hosted JWKS that cannot be had refuses the assertion (invalid_client, 401) at PAR and token', () => {
  it('serves the client when it answers (the baseline the cases below differ from)', async () => {
    await withJwksAt('/good', async (fapi) => {
      expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(201);
    });
  });

  it('answers HTTP 500 (with the right keys in the body)', async () => {
    await withJwksAt('/error', async (fapi) => {
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/keys could not be had: the jwksUri answered HTTP 500, not 200/);
      expect(hits.get('/error')).toBe(1);
    });
  });

  it('never answers: refused once the 3 s timeout has passed, and the next request does not wait again', {
    timeout: 20_000,
  }, async () => {
    await withJwksAt('/silent', async (fapi) => {
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/the jwksUri did not answer within 3000 ms/);
      expect(hits.get('/silent')).toBe(1);
    });
  });

  it('answers a redirect: not followed', async () => {
    const before = hits.get('/good') ?? 0;
    await withJwksAt('/moved', async (fapi) => {
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/the jwksUri answered a redirect \(HTTP 302\), which is not followed/);
      expect(hits.get('/moved')).toBe(1);
      expect(hits.get('/good') ?? 0).toBe(before);
    });
  });

  it('answers more than 64 KiB', async () => {
    await withJwksAt('/large', async (fapi) => {
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/the jwksUri answered more than 65536 bytes/);
      expect(hits.get('/large')).toBe(1);
    });
  });

  it('cannot be reached (nothing listens at its port)', async () => {
    const port = await freePort();
    const fapi = await startWithJwksUri('unreachable', `http://127.0.0.1:${port}/jwks.json`, keys);
    try {
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/the jwksUri could not be reached/);
    } finally {
      await fapi.close();
    }
  });

  it('keys fetched once are not used past five minutes when the refetch fails, and redirect-like statuses that are not redirects are named by their number', async () => {
    let status = 200;
    const flaky = await jwksHost((_req, res) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(jwks));
    });
    const fapi = await startWithJwksUri('stale', `${flaky.origin}/jwks.json`, keys);
    try {
      expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(201);
      status = 304;
      fapi.provider.advanceClock(300_001);
      // The refetch fails; the keys of five minutes ago are not used for the requests after it either.
      for (const description of await refusedTwice(fapi))
        expect(description).toMatch(/the jwksUri answered HTTP 304, not 200/);
      status = 200;
      fapi.provider.advanceClock(11_000);
      expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(201);
    } finally {
      await fapi.close();
      await flaky.close();
    }
  });

  it('is asked again after the refetch interval, and serves the client once it answers', async () => {
    let failing = true;
    const flaky = await jwksHost((_req, res) => {
      res.statusCode = failing ? 503 : 200;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(jwks));
    });
    const fapi = await startWithJwksUri('flaky', `${flaky.origin}/jwks.json`, keys);
    try {
      for (const description of await refusedTwice(fapi)) expect(description).toMatch(/HTTP 503/);
      failing = false;
      expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(401);
      fapi.provider.advanceClock(11_000);
      expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(201);
    } finally {
      await fapi.close();
      await flaky.close();
    }
  });
});
