/**
 * A FAPI 2.0 authorization server that behaves as the OpenID Foundation's FAPI 2.0 Security
 * Profile final client test plan has it behave (variant: private_key_jwt, DPoP, OpenID Connect,
 * unsigned pushed request, plain response), written here from the rules of its module classes
 * (`fapi2spfinal/FAPI2SPFinalClientTest*.java` and the conditions they call). One server per
 * module; a {@link ModuleFault} is what that module changes. Besides answering, the server
 * records every way the client breaks the plan's rules (a bad assertion or proof, a call it must
 * not make after a response it must refuse), so a test asserts both the client's verdict and its
 * conduct. Not a test file itself.
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  EmbeddedJWK,
  exportJWK,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose';
import { closeServer, listenOnLoopback } from '../helpers/harness.js';

/** What a module changes in the server's behaviour; every field defaults to the happy path. */
export interface ModuleFault {
  /** No DPoP nonce demanded at the authorization server or the resource server (HappyPathNoDpopNonce). */
  noDpopNonce?: boolean;
  /** The discovery document names another issuer (DiscoveryIssuerMismatch). */
  discoveryIssuerMismatch?: boolean;
  /** Changes the authorization response's parameters (iss, state) before the redirect. */
  authorizationResponse?: (params: URLSearchParams, issuer: string) => void;
  /** Changes the ID token's claims before it is signed. */
  idTokenClaims?: (claims: Record<string, unknown>) => void;
  /** Signs the ID token another way: `none`, or RS256 with the extra RSA key the JWKS lists. */
  idTokenSignature?: 'none' | 'alternate-rs256';
  /** Changes the token response (expires_in, token_type). */
  tokenResponse?: (body: Record<string, unknown>) => void;
  /** The scheme of the resource server's `use_dpop_nonce` challenge. Default `DPoP`. */
  resourceChallengeScheme?: string;
  /** Where the client must stop: it may not call anything after this (discovery, the authorization response, the ID token). */
  clientMustStopAfter?: 'discovery' | 'authorization_response' | 'id_token';
  /** Encrypt the ID token (the plan never does; for the app that registered encryption). */
  encryptIdToken?: (signed: string) => Promise<string>;
}

/** A running module server. */
export interface ModuleServer {
  issuer: string;
  /** The client's breaches of the plan's rules, in order; empty when it behaved. */
  violations: string[];
  /** Paths called, in order (`/par`, `/authorize`, ...). */
  calls: string[];
  /** True once the resource (userinfo) endpoint answered 200. */
  resourceServed(): boolean;
  close(): Promise<void>;
}

/** The registration of the client under test. */
export interface RegisteredClient {
  clientId: string;
  redirectUri: string;
  jwks: JSONWebKeySet;
}

const FORM = 'application/x-www-form-urlencoded';
const USER = { sub: 'user-subject-1234531', name: 'Demo T. User', email: 'user@example.com' };

interface PushedRequest {
  params: URLSearchParams;
  dpopJkt: string | undefined;
}
interface IssuedCode {
  pushed: PushedRequest;
}
interface IssuedToken {
  jkt: string;
}

/** The server's keys: the PS256 signing key, an RSA `enc` key and the extra RSA `sig` key the plan lists beside them. */
interface ServerKeys {
  signing: KeyObject;
  signingKid: string;
  alternate: KeyObject;
  publicJwks: JSONWebKeySet;
}

async function serverKeys(): Promise<ServerKeys> {
  const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signing = rsa();
  const enc = rsa();
  const alternate = rsa();
  const signingKid = randomUUID();
  const publicJwks = {
    keys: [
      { ...(await exportJWK(signing.publicKey)), kid: signingKid, use: 'sig', alg: 'PS256' },
      { ...(await exportJWK(enc.publicKey)), kid: randomUUID(), use: 'enc', alg: 'RSA-OAEP-256' },
      { ...(await exportJWK(alternate.publicKey)), kid: 'rsa-none-alt-arg', use: 'sig' },
    ],
  } as JSONWebKeySet;
  return { signing: signing.privateKey, signingKid, alternate: alternate.privateKey, publicJwks };
}

/** Starts the server of one module for `client` (whose redirect URI and keys it holds). */
export async function startModuleServer(
  client: () => RegisteredClient,
  fault: ModuleFault = {},
): Promise<ModuleServer> {
  const state = new ModuleState(client, fault, await serverKeys());
  const server: Server = createServer((req, res) => {
    state.handle(req, res).catch((err: unknown) => {
      state.violations.push(`server error: ${String(err)}`);
      if (!res.headersSent) send(res, 500, { error: 'server_error' });
    });
  });
  const base = await listenOnLoopback(server);
  state.issuer = `${base}/`;
  return {
    get issuer() {
      return state.issuer;
    },
    violations: state.violations,
    calls: state.calls,
    resourceServed: () => state.resourceServed,
    close: () => closeServer(server),
  };
}

class ModuleState {
  issuer = '';
  readonly violations: string[] = [];
  readonly calls: string[] = [];
  resourceServed = false;
  readonly #pushed = new Map<string, PushedRequest>();
  readonly #codes = new Map<string, IssuedCode>();
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #seenJti = new Set<string>();
  #asNonce: string | undefined;
  #rsNonce: string | undefined;
  #stopped = false;

  constructor(
    readonly client: () => RegisteredClient,
    readonly fault: ModuleFault,
    readonly keys: ServerKeys,
  ) {
    this.#asNonce = this.#newNonce();
    this.#rsNonce = this.#newNonce();
  }

  #newNonce(): string | undefined {
    return this.fault.noDpopNonce === true ? undefined : randomBytes(24).toString('base64url');
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    const path = url.pathname.slice(new URL(this.issuer).pathname.length - 1);
    this.calls.push(path);
    if (path === '/.well-known/openid-configuration') return this.#discovery(res);
    if (path === '/jwks') return send(res, 200, this.keys.publicJwks);
    if (this.#stopped) {
      this.violations.push(`called ${path} after a response it must refuse`);
      return send(res, 400, { error: 'invalid_request' });
    }
    const body = req.method === 'POST' ? await readForm(req) : new URLSearchParams();
    if (path === '/par') return this.#par(req, res, body);
    if (path === '/authorize') return this.#authorize(url, res);
    if (path === '/token') return this.#token(req, res, body);
    if (path === '/userinfo') return this.#userinfo(req, res);
    this.violations.push(`unexpected call to ${path}`);
    send(res, 404, { error: 'not_found' });
  }

  #discovery(res: ServerResponse): void {
    const base = this.issuer;
    if (this.fault.clientMustStopAfter === 'discovery') this.#stopped = true;
    send(res, 200, {
      issuer: this.fault.discoveryIssuerMismatch === true ? `${base}INVALID` : base,
      authorization_endpoint: `${base}authorize`,
      token_endpoint: `${base}token`,
      userinfo_endpoint: `${base}userinfo`,
      jwks_uri: `${base}jwks`,
      pushed_authorization_request_endpoint: `${base}par`,
      require_pushed_authorization_requests: true,
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['openid', 'profile', 'email'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['PS256'],
      dpop_signing_alg_values_supported: ['PS256', 'ES256', 'EdDSA'],
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['PS256', 'ES256', 'EdDSA'],
      grant_types_supported: ['authorization_code'],
    });
  }

  /** The pushed request: the client authenticated, a DPoP proof (if any) with the nonce, the parameters. */
  async #par(req: IncomingMessage, res: ServerResponse, body: URLSearchParams): Promise<void> {
    await this.#checkClientAssertion(body, 'PAR');
    let proofJkt: string | undefined;
    if (req.headers.dpop !== undefined) {
      const proof = await this.#checkDpopProof(req, `${this.issuer}par`, 'POST');
      if (!this.#nonceOk(proof.nonce, this.#asNonce)) return this.#asNonceError(res);
      proofJkt = proof.jkt;
    }
    const dpopJkt = body.get('dpop_jkt') ?? undefined;
    if (dpopJkt !== undefined && proofJkt !== undefined && dpopJkt !== proofJkt)
      this.violations.push('PAR: dpop_jkt differs from the DPoP proof key');
    for (const [name, check] of PAR_RULES) if (!check(body)) this.violations.push(`PAR: ${name}`);
    if (body.has('request_uri')) this.violations.push('PAR: request_uri in a pushed request');
    const requestUri = `urn:ietf:params:oauth:request_uri:${randomUUID()}`;
    this.#pushed.set(requestUri, { params: body, dpopJkt: dpopJkt ?? proofJkt });
    send(res, 201, { request_uri: requestUri, expires_in: 600 });
  }

  /** The authorization endpoint: client_id and request_uri only; redirects back with code, iss (and state). */
  #authorize(url: URL, res: ServerResponse): void {
    const keys = [...url.searchParams.keys()].sort();
    if (keys.join(',') !== 'client_id,request_uri')
      this.violations.push(`authorize: parameters beside client_id and request_uri (${keys.join(', ')})`);
    const pushed = this.#pushed.get(url.searchParams.get('request_uri') ?? '');
    if (pushed === undefined || url.searchParams.get('client_id') !== this.client().clientId) {
      this.violations.push('authorize: an unknown request_uri or another client_id');
      return send(res, 400, { error: 'invalid_request' });
    }
    this.#pushed.delete(url.searchParams.get('request_uri') ?? '');
    const code = randomBytes(32).toString('base64url');
    this.#codes.set(code, { pushed });
    const params = new URLSearchParams({ code, iss: this.issuer });
    const state = pushed.params.get('state');
    if (state !== null) params.set('state', state);
    this.fault.authorizationResponse?.(params, this.issuer);
    if (this.fault.clientMustStopAfter === 'authorization_response') this.#stopped = true;
    this.#asNonce = this.#newNonce();
    res.writeHead(302, { location: `${pushed.params.get('redirect_uri')}?${params}` }).end();
  }

  /** The token endpoint: assertion, DPoP proof with the nonce, code, PKCE; a DPoP-bound token and a PS256 ID token. */
  async #token(req: IncomingMessage, res: ServerResponse, body: URLSearchParams): Promise<void> {
    await this.#checkClientAssertion(body, 'token');
    const proof = await this.#checkDpopProof(req, `${this.issuer}token`, 'POST');
    if (!this.#nonceOk(proof.nonce, this.#asNonce)) return this.#asNonceError(res);
    const issued = this.#codes.get(body.get('code') ?? '');
    if (body.get('grant_type') !== 'authorization_code' || issued === undefined) {
      this.violations.push('token: no authorization_code grant with a code this server issued');
      return send(res, 400, { error: 'invalid_grant' });
    }
    this.#codes.delete(body.get('code') ?? '');
    const { params, dpopJkt } = issued.pushed;
    if (dpopJkt !== undefined && dpopJkt !== proof.jkt)
      this.violations.push('token: the proof key is not the one the code is bound to');
    if (body.get('redirect_uri') !== params.get('redirect_uri')) this.violations.push('token: another redirect_uri');
    if (s256(body.get('code_verifier') ?? '') !== params.get('code_challenge'))
      this.violations.push('token: the code_verifier does not match');
    const accessToken = randomBytes(32).toString('base64url');
    this.#tokens.set(accessToken, { jkt: proof.jkt });
    const tokens: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'DPoP',
      expires_in: 3600,
      refresh_token: randomBytes(32).toString('base64url'),
      id_token: await this.#idToken(params.get('nonce') ?? undefined, accessToken),
    };
    this.fault.tokenResponse?.(tokens);
    if (this.fault.clientMustStopAfter === 'id_token') this.#stopped = true;
    this.#asNonce = this.#newNonce();
    send(res, 200, tokens, this.#asNonce === undefined ? {} : { 'DPoP-Nonce': this.#asNonce });
  }

  async #idToken(nonce: string | undefined, accessToken: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.issuer,
      sub: USER.sub,
      aud: this.client().clientId,
      ...(nonce === undefined ? {} : { nonce }),
      iat: now,
      exp: now + 300,
      at_hash: createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url'),
    };
    this.fault.idTokenClaims?.(claims);
    const signed = await this.#sign(claims);
    return this.fault.encryptIdToken === undefined ? signed : this.fault.encryptIdToken(signed);
  }

  #sign(claims: Record<string, unknown>): Promise<string> {
    if (this.fault.idTokenSignature === 'none') {
      const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      return Promise.resolve(`${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`);
    }
    if (this.fault.idTokenSignature === 'alternate-rs256') {
      return new SignJWT(claims as JWTPayload)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'rsa-none-alt-arg' })
        .sign(this.keys.alternate);
    }
    return new SignJWT(claims as JWTPayload)
      .setProtectedHeader({ alg: 'PS256', typ: 'JWT', kid: this.keys.signingKid })
      .sign(this.keys.signing);
  }

  /** The resource (userinfo) endpoint: a DPoP-bound token, a proof with `ath` and the resource server's nonce. */
  async #userinfo(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [scheme, accessToken = ''] = (req.headers.authorization ?? '').split(' ');
    if (scheme?.toLowerCase() !== 'dpop')
      this.violations.push('userinfo: the access token is not sent with the DPoP scheme');
    const proof = await this.#checkDpopProof(req, `${this.issuer}userinfo`, 'GET', accessToken);
    if (!this.#nonceOk(proof.nonce, this.#rsNonce)) {
      const scheme = this.fault.resourceChallengeScheme ?? 'DPoP';
      res
        .writeHead(401, {
          'www-authenticate': `${scheme} error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`,
          'DPoP-Nonce': this.#rsNonce ?? '',
        })
        .end();
      return;
    }
    const token = this.#tokens.get(accessToken);
    if (token === undefined || token.jkt !== proof.jkt) {
      this.violations.push('userinfo: an access token this server did not bind to the proof key');
      return send(res, 401, { error: 'invalid_token' });
    }
    this.#rsNonce = this.#newNonce();
    this.resourceServed = true;
    send(res, 200, USER, this.#rsNonce === undefined ? {} : { 'DPoP-Nonce': this.#rsNonce });
  }

  #nonceOk(given: unknown, expected: string | undefined): boolean {
    return expected === undefined || given === expected;
  }

  #asNonceError(res: ServerResponse): void {
    send(
      res,
      400,
      { error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof' },
      { 'DPoP-Nonce': this.#asNonce ?? '' },
    );
  }

  /** `private_key_jwt` (RFC 7523) by the plan's rules: signed with a registered key, `aud` the issuer as a string. */
  async #checkClientAssertion(body: URLSearchParams, where: string): Promise<void> {
    const { clientId, jwks } = this.client();
    if (body.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
      this.violations.push(`${where}: no private_key_jwt client assertion`);
      return;
    }
    try {
      const { payload } = await jwtVerify(body.get('client_assertion') ?? '', createLocalJWKSet(jwks), {
        issuer: clientId,
        subject: clientId,
        algorithms: ['PS256', 'ES256', 'EdDSA'],
        requiredClaims: ['exp', 'jti'],
      });
      if (payload.aud !== this.issuer)
        this.violations.push(`${where}: the assertion's aud is not the issuer as a string`);
      if (this.#seenJti.has(`a:${payload.jti}`)) this.violations.push(`${where}: a client assertion jti used twice`);
      this.#seenJti.add(`a:${payload.jti}`);
    } catch (err) {
      this.violations.push(`${where}: the client assertion does not verify (${(err as Error).message})`);
    }
  }

  /** A DPoP proof (RFC 9449 4.3): typ, its own key, htm/htu, a fresh jti and iat, and `ath` at the resource. */
  async #checkDpopProof(
    req: IncomingMessage,
    htu: string,
    htm: string,
    accessToken?: string,
  ): Promise<{ jkt: string; nonce: unknown }> {
    const where = new URL(htu).pathname;
    try {
      const { payload, protectedHeader } = await jwtVerify(String(req.headers.dpop ?? ''), EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: ['PS256', 'ES256', 'EdDSA'],
        maxTokenAge: 60,
      });
      if (payload.htm !== htm || payload.htu !== htu)
        this.violations.push(`${where}: the proof's htm/htu do not match`);
      if (typeof payload.jti !== 'string' || this.#seenJti.has(`p:${payload.jti}`))
        this.violations.push(`${where}: a proof jti missing or used twice`);
      this.#seenJti.add(`p:${String(payload.jti)}`);
      if (accessToken !== undefined && payload.ath !== s256(accessToken))
        this.violations.push(`${where}: the proof's ath does not match`);
      return { jkt: await calculateJwkThumbprint(protectedHeader.jwk!), nonce: payload.nonce };
    } catch (err) {
      this.violations.push(`${where}: the DPoP proof does not verify (${(err as Error).message})`);
      return { jkt: '', nonce: undefined };
    }
  }
}

/** What the plan requires of a pushed request (FAPI 2.0 5.3.2.2, PKCE, OpenID Connect). */
const PAR_RULES: [string, (body: URLSearchParams) => boolean][] = [
  ['response_type is not code', (b) => b.get('response_type') === 'code'],
  [
    'no S256 code_challenge',
    (b) => b.get('code_challenge_method') === 'S256' && (b.get('code_challenge') ?? '') !== '',
  ],
  ['scope without openid', (b) => (b.get('scope') ?? '').split(' ').includes('openid')],
  ['no redirect_uri', (b) => (b.get('redirect_uri') ?? '') !== ''],
];

function s256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!(req.headers['content-type'] ?? '').startsWith(FORM)) return new URLSearchParams();
  return new URLSearchParams(text);
}
