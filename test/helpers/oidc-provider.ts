/**
 * panva's oidc-provider (OpenID-Certified), started on 127.0.0.1 with its OWN routes (`/auth`,
 * `/token`, `/me`, `/jwks`, `/request`) under an issuer that carries a path (`/oidc`), and a
 * browser that signs a person in through its development interactions (its login and consent
 * forms) over real HTTP with its cookies. Every request the provider receives is counted by path.
 * Not a test file itself.
 */
import { createPrivateKey, randomBytes } from 'node:crypto';
import { generateEcJwkPair } from '../../src/keys.js';
import { pooledKeyPair } from './keys.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ClientMetadata, type Configuration } from 'oidc-provider';

/** Options of {@link startOidcProvider}. */
export interface OidcProviderOptions {
  /** The clients, in oidc-provider's (OpenID registration) metadata. */
  clients: ClientMetadata[];
  /** Its FAPI 2.0 profile: PAR required, DPoP with nonces required, encrypted ID tokens. */
  fapi?: boolean;
  /** The path the issuer carries. Default `/oidc`. */
  mountPath?: string;
  /** Changes the configuration before the provider is built (algorithms, features). */
  configure?: (configuration: Configuration) => void;
  /** Fields that replace the discovery document's own (a provider advertising something else than it does). */
  discoveryOverrides?: Record<string, unknown>;
  /**
   * Userinfo as a JWT (its `jwtUserinfo` and `encryption` features) for a client registered with
   * `userinfo_signed_response_alg` (and `userinfo_encrypted_response_alg`), and a `myinfo` scope
   * whose `person_info` claim is an object, as Myinfo v5 sends it.
   */
  jwtUserinfo?: boolean;
  /** Its back-channel logout (`features.backchannelLogout`): a sign-out at its end_session endpoint POSTs logout tokens. */
  backchannelLogout?: boolean;
}

/** The `person_info` claim of every account, Myinfo v5's shape in short. */
export const PERSON_INFO = { name: { value: 'TAN XIAO HUI' }, sex: { code: 'F', desc: 'FEMALE' } };

/** A running oidc-provider. */
export interface StartedOidcProvider {
  /** Its issuer, with the path: `http://127.0.0.1:<port>/oidc`. */
  issuer: string;
  origin: string;
  provider: Provider;
  /** Requests received, by path under the issuer (`/.well-known/openid-configuration`, `/token`, `/me`, ...). */
  requests: Map<string, number>;
  /** Back-channel logouts it sent, by client: `ok`, or the error it met (a relying party's answer other than 200). */
  backchannel: Array<{ clientId: string; outcome: string }>;
  close(): Promise<void>;
}

/** Starts oidc-provider with its own routes; the app's clients are registered up front. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<StartedOidcProvider> {
  const mountPath = options.mountPath ?? '/oidc';
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${mountPath}`;
  const rsa = createPrivateKey(pooledKeyPair().privateKeyPem).export({ format: 'jwk' });
  const ec = generateEcJwkPair('P-256').privateJwk;
  const configuration: Configuration = {
    clients: options.clients,
    jwks: {
      keys: [
        { ...rsa, kid: 'rsa-sig-1', use: 'sig' },
        { ...ec, kid: 'ec-sig-1', use: 'sig' },
      ] as never,
    },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], profile: ['name'], email: ['email'], myinfo: ['person_info'] },
    findAccount: async (_ctx, accountId) => ({
      accountId,
      claims: async () => ({
        sub: accountId,
        name: `Person ${accountId}`,
        email: `${accountId}@example.test`,
        person_info: PERSON_INFO,
      }),
    }),
    pkce: { required: () => true },
    // Its own outgoing requests (the app's jwks_uri) refuse loopback addresses by default; the app runs on 127.0.0.1 here.
    fetch: (url, init) => globalThis.fetch(url, { ...init, dispatcher: undefined } as RequestInit),
    enabledJWA: {
      idTokenEncryptionAlgValues: ['ECDH-ES+A256KW', 'RSA-OAEP-256'],
      idTokenEncryptionEncValues: ['A256GCM', 'A256CBC-HS512'],
      userinfoEncryptionAlgValues: ['ECDH-ES+A256KW', 'RSA-OAEP-256'],
      userinfoEncryptionEncValues: ['A256GCM', 'A256CBC-HS512'],
    },
    features: {
      devInteractions: { enabled: true },
      ...(options.jwtUserinfo === true ? { jwtUserinfo: { enabled: true }, encryption: { enabled: true } } : {}),
      ...(options.backchannelLogout === true ? { backchannelLogout: { enabled: true } } : {}),
      ...(options.fapi === true
        ? {
            fapi: { enabled: true, profile: '2.0' },
            pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: true },
            dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
            encryption: { enabled: true },
          }
        : {}),
    },
  };
  options.configure?.(configuration);
  const provider = new Provider(issuer, configuration);
  const overrides = options.discoveryOverrides;
  if (overrides !== undefined) {
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path === '/.well-known/openid-configuration') ctx.body = { ...(ctx.body as object), ...overrides };
    });
  }
  const handle = provider.callback();
  if (process.env.OIDC_PROVIDER_DEBUG) {
    for (const event of [
      'pushed_authorization_request.error',
      'grant.error',
      'userinfo.error',
      'server_error',
      'authorization.error',
    ]) {
      (
        provider as unknown as {
          on(
            name: string,
            listener: (ctx: unknown, err: { error?: string; error_description?: string; message?: string }) => void,
          ): void;
        }
      ).on(event, (_ctx, err) => {
        process.stderr.write(
          `oidc-provider ${event}: ${err.error ?? ''} ${err.error_description ?? err.message ?? ''} ${String((err as { cause?: { message?: string; cause?: unknown } }).cause?.message ?? '')} ${String((err as { cause?: { cause?: { message?: string } } }).cause?.cause?.message ?? '')}\n`,
        );
      });
    }
  }
  const requests = new Map<string, number>();
  const backchannel: StartedOidcProvider['backchannel'] = [];
  const events = provider as unknown as { on(name: string, listener: (...args: never[]) => void): void };
  events.on('backchannel.success', (_ctx: unknown, client: { clientId: string }) => {
    backchannel.push({ clientId: client.clientId, outcome: 'ok' });
  });
  events.on('backchannel.error', (_ctx: unknown, err: Error, client: { clientId: string }) => {
    backchannel.push({ clientId: client.clientId, outcome: err.message });
  });
  server.on('request', (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${mountPath}/`)) {
      res.writeHead(404).end();
      return;
    }
    // Mounted under the issuer's path, as oidc-provider expects when the issuer carries one
    // (it reads the mount path from originalUrl, as under Express).
    (req as { originalUrl?: string }).originalUrl = url;
    req.url = url.slice(mountPath.length);
    const path = req.url.split('?')[0]!;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    handle(req, res);
  });
  return {
    issuer,
    origin,
    provider,
    requests,
    backchannel,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Follows an authorization URL through oidc-provider's login and consent forms as a browser
 * would (its cookies kept and sent back), signing in as `login`; returns the URL the provider
 * finally sends the browser to (the app's callback, with `code`, `state` and `iss`).
 */
export async function signInAtProvider(
  authorizationUrl: string,
  started: StartedOidcProvider,
  login = 'alice',
  jar = new Map<string, string>(),
): Promise<URL> {
  let next = new URL(authorizationUrl);
  let form: string | undefined;
  for (let hop = 0; hop < 16; hop += 1) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        ...(cookie === '' ? {} : { cookie }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: form }),
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (value === '' || /expires=thu, 01 jan 1970/i.test(line)) jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), value);
    }
    const text = await res.text();
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location') ?? '', next);
      if (!location.href.startsWith(`${started.issuer}/`)) return location;
      next = location;
      form = undefined;
      continue;
    }
    const prompt = /name="prompt" value="(\w+)"/.exec(text)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1];
    if (res.status !== 200 || prompt === undefined || action === undefined) {
      throw new Error(
        `oidc-provider answered ${res.status} at ${next.pathname}: ${text
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .slice(0, 400)}`,
      );
    }
    next = new URL(action.replace(/&amp;/g, '&'), next);
    form =
      prompt === 'login'
        ? new URLSearchParams({ prompt, login, password: 'any' }).toString()
        : new URLSearchParams({ prompt }).toString();
  }
  throw new Error('oidc-provider did not send the browser back to the app within 16 hops');
}

/**
 * Signs the person out at oidc-provider as a browser would: its end_session page, then its
 * confirmation form with the `xsrf` it gave and `logout=yes` (out of every client), with the
 * provider cookies `jar` kept by {@link signInAtProvider}. Returns the confirmation's status.
 */
export async function signOutAtProvider(started: StartedOidcProvider, jar: Map<string, string>): Promise<number> {
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const page = await fetch(`${started.issuer}/session/end`, { headers: { cookie }, redirect: 'manual' });
  const text = await page.text();
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(text)?.[1];
  const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1];
  if (page.status !== 200 || xsrf === undefined || action === undefined)
    throw new Error(`oidc-provider's end_session answered ${page.status} without its form`);
  const confirm = await fetch(new URL(action.replace(/&amp;/g, '&'), `${started.issuer}/`), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
  });
  await confirm.arrayBuffer();
  return confirm.status;
}
