/**
 * The FAPI 2.0 replay defences stay closed under floods, over real HTTP:
 * - a full store of used `jti`s refuses new requests (503 `temporarily_unavailable`) rather than
 *   forget a live `jti` (which would make its assertion or proof replayable);
 * - at userinfo, proofs made with keys other than the token's are refused without their `jti`
 *   being remembered, so throwaway keys cannot fill the store;
 * - each FAPI client holds at most its share of that store (its size over the number of FAPI
 *   clients): one client's flood is refused for that client (429, audited) while another signs in;
 * - a hosted JWKS that answers 200 with nothing usable is fetched again only after the refetch
 *   interval, like one that does not answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fapiTestKeys,
  type ProviderClient,
  startProvider,
  type TestFapiKeys,
  type TestProvider,
} from '../../helpers/provider.js';
import { testKeyPair } from '../../helpers/keys.js';
import {
  assertion,
  athOf,
  DpopKey,
  jwksHost,
  loginParams,
  push,
  startFapi,
  startWithJwksUri,
  tokenCall,
  tokensOf,
} from './support.js';

const errorOf = async (res: Response): Promise<{ error: string; error_description: string }> =>
  (await res.json()) as { error: string; error_description: string };

describe('the store of used jti values, bounded (maxCodes and maxAccessTokens 2: four entries)', () => {
  let test: TestProvider;
  let dpop: DpopKey;
  beforeAll(async () => {
    test = await startFapi({ maxCodes: 2, maxAccessTokens: 2 });
    dpop = await DpopKey.make();
  });
  afterAll(() => test.close());

  it('when full, refuses the next request with 503 instead of forgetting a live jti, and a replayed assertion stays refused', async () => {
    const first = await assertion(test);
    expect((await push(test, dpop, loginParams(test).params, { assertion: first })).status).toBe(201);
    expect((await push(test, dpop, loginParams(test).params)).status).toBe(201);
    const full = await push(test, dpop, loginParams(test).params);
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('60');
    expect((await errorOf(full)).error).toBe('temporarily_unavailable');
    const replay = await push(test, dpop, loginParams(test).params, { assertion: first });
    expect(replay.status).toBe(401);
    expect((await errorOf(replay)).error_description).toMatch(/jti was already used/);
    // Once the entries have lived out their time the store takes new ones again.
    test.provider.advanceClock(300_000);
    expect((await push(test, dpop, loginParams(test).params)).status).toBe(201);
  });

  it('at userinfo, proofs of other keys do not fill it: a used proof stays refused and the real key still works', async () => {
    test.provider.advanceClock(300_000);
    const { access_token } = await tokensOf(test, dpop); // fills the four entries
    test.provider.advanceClock(300_000); // they expire; the access token does not
    const url = `${test.baseUrl}/v2/oauth/userinfo`;
    const call = (proof: string): Promise<Response> =>
      fetch(url, { headers: { authorization: `DPoP ${access_token}`, dpop: proof } });
    const used = await dpop.proof(test, 'GET', url, { ath: athOf(access_token) });
    expect((await call(used)).status).toBe(200);
    for (let i = 0; i < 6; i++) {
      const stranger = await DpopKey.make();
      const res = await call(await stranger.proof(test, 'GET', url, { ath: athOf(access_token) }));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    }
    const replay = await call(used);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof"/);
    expect(test.provider.audit(test.client.clientId).map((f) => f.code)).toContain('dpop_proof_jti_reused');
    expect((await call(await dpop.proof(test, 'GET', url, { ath: athOf(access_token) }))).status).toBe(200);
  });
});

describe('each FAPI client held to its share of the store (two clients, maxCodes and maxAccessTokens 4: eight entries, four each)', () => {
  let close: () => Promise<void>;
  let flooder: TestProvider;
  let other: TestProvider;
  beforeAll(async () => {
    const redirectUri = 'http://127.0.0.1:3000/auth/callback';
    const [floodKeys, otherKeys] = [await fapiTestKeys(), await fapiTestKeys()];
    const registration = (clientId: string, keys: TestFapiKeys): ProviderClient => ({
      clientId,
      redirectUris: [redirectUri],
      publicKey: testKeyPair('rp').publicKeyPem,
      profile: 'fapi2',
      jwks: keys.jwks,
      idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
    });
    const started = await startProvider({
      autoApprove: true,
      maxCodes: 4,
      maxAccessTokens: 4,
      clients: [registration('flooder', floodKeys), registration('other', otherKeys)],
    });
    close = started.close;
    const as = (clientId: string, fapi: TestFapiKeys): TestProvider => ({
      provider: started.provider,
      baseUrl: started.baseUrl,
      client: { clientId, clientSecret: '', privateKey: '', redirectUri, fapi },
      close: started.close,
    });
    flooder = as('flooder', floodKeys);
    other = as('other', otherKeys);
  });
  afterAll(() => close());

  it('refuses the flooding client past its share (429, audited) while the other client signs in', async () => {
    const dpop = await DpopKey.make();
    // Each pushed request holds two entries: its assertion's jti and its proof's.
    expect((await push(flooder, dpop, loginParams(flooder).params)).status).toBe(201);
    expect((await push(flooder, dpop, loginParams(flooder).params)).status).toBe(201);
    const refused = await push(flooder, dpop, loginParams(flooder).params);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    const body = await errorOf(refused);
    expect(body.error).toBe('temporarily_unavailable');
    expect(body.error_description).toMatch(/This client has 4 client assertions and DPoP proofs in flight, its share/);
    expect(flooder.provider.audit('flooder').map((f) => f.code)).toContain('jti_share_used_up');
    // The token endpoint refuses it the same way.
    const atToken = await tokenCall(flooder, dpop, { code: 'unused', code_verifier: 'v'.repeat(43) });
    expect(atToken.status).toBe(429);
    expect((await errorOf(atToken)).error).toBe('temporarily_unavailable');
    // The other client has its own four: a whole login (PAR and token, two entries each).
    const { token_type } = await tokensOf(other, dpop);
    expect(token_type).toBe('DPoP');
    expect(other.provider.audit('other').map((f) => f.code)).not.toContain('jti_share_used_up');
    // Once its entries have lived out their time the flooding client is served again.
    flooder.provider.advanceClock(400_000);
    expect((await push(flooder, dpop, loginParams(flooder).params)).status).toBe(201);
  });

  it('does not let a refused assertion be replayed once the share frees up', async () => {
    flooder.provider.advanceClock(400_000);
    const dpop = await DpopKey.make();
    const used = await assertion(flooder);
    expect((await push(flooder, dpop, loginParams(flooder).params, { assertion: used })).status).toBe(201);
    const replay = await push(flooder, dpop, loginParams(flooder).params, { assertion: used });
    expect(replay.status).toBe(401);
    expect((await errorOf(replay)).error_description).toMatch(/jti was already used/);
  });
});

describe('a hosted JWKS that answers 200 with nothing usable', () => {
  let host: Awaited<ReturnType<typeof jwksHost>>;
  let hits = 0;
  let fapi: TestProvider;
  beforeAll(async () => {
    const keys = await fapiTestKeys();
    host = await jwksHost((_req, res) => {
      hits++;
      res.setHeader('content-type', 'text/html');
      res.end('<html>maintenance</html>');
    });
    fapi = await startWithJwksUri('broken-jwks', `${host.origin}/jwks.json`, keys);
  });
  afterAll(async () => {
    await fapi.close();
    await host.close();
  });

  it('is fetched once per refetch interval however many requests name the client', async () => {
    const dpop = await DpopKey.make();
    for (let i = 0; i < 5; i++) {
      const res = await push(fapi, dpop, loginParams(fapi).params);
      expect(res.status).toBe(401);
      expect((await errorOf(res)).error).toBe('invalid_client');
    }
    expect(hits).toBe(1);
    fapi.provider.advanceClock(11_000);
    expect((await push(fapi, dpop, loginParams(fapi).params)).status).toBe(401);
    expect(hits).toBe(2);
  });
});
