/**
 * What `npm run load` and its soak mode share: browsers with their own cookie jars, one
 * autoApprove provider per persona behind a front on the issuer's origin, and a complete login
 * that checks the profile page shows the person who signed in (no cross-talk).
 *
 * Persona per login: autoApprove signs everyone in as one fixed persona, so one provider runs
 * per persona (same issuer, signing key and pairwise-subject secret), behind a small front on
 * the issuer's origin. A browser sends its authorization request to its persona's provider; the
 * front routes the RP's token call by the code that provider issued, and the userinfo call by
 * the access token it returned.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_PERSONAS, startProvider, type Persona, type StartedProvider } from '../src/provider/index.js';

/** The client id the relying party is registered under. */
export const CLIENT_ID = 'load-test-rp';
/** The scopes it asks for. */
export const SCOPE = 'openid profile.name profile.nric_number profile.passport_expiry_date';
/** The example app's session cookie. */
export const COOKIE_NAME = 'example-app.sid';
/** Most sockets per origin, for the browsers and for the provider front. */
const MAX_SOCKETS = 200;

// ---------------------------------------------------------------------------------------------
// HTTP as a browser does it, one cookie jar per browser.

/** An HTTP answer, body read. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The browsers' connection pool. */
export const browserAgent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });

/** GET `url` with an optional Cookie header. */
export function get(url: string, cookie?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: browserAgent, headers: cookie ? { cookie } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer within 30 s from ${new URL(url).pathname}`)));
    req.on('error', reject);
    req.end();
  });
}

/** A browser: remembers the session cookie the RP sets. */
export class Browser {
  cookie: string | undefined;

  async get(url: string): Promise<Answer> {
    const answer = await get(url, this.cookie);
    for (const line of answer.headers['set-cookie'] ?? []) {
      const pair = line.split(';', 1)[0]!;
      if (pair.startsWith(`${COOKIE_NAME}=`)) this.cookie = pair;
    }
    return answer;
  }

  /** The session id inside the signed cookie `s:<sid>.<signature>`. */
  sessionId(): string | undefined {
    if (this.cookie === undefined) return undefined;
    const value = decodeURIComponent(this.cookie.slice(COOKIE_NAME.length + 1));
    if (!value.startsWith('s:')) return undefined;
    return value.slice(2, value.lastIndexOf('.'));
  }
}

/** A step of a login answered with a page instead of a redirect: the login ended on that page. */
export class PageError extends Error {
  /** The page's HTTP status. */
  readonly status: number;
  /** The page's `<h1>`, or '' when it has none (not a clear page). */
  readonly heading: string;
  constructor(what: string, answer: Answer) {
    const heading = /<h1>([^<]{1,100})<\/h1>/.exec(answer.body)?.[1] ?? '';
    super(`${what}: expected a redirect, got HTTP ${answer.status}${heading ? ` "${heading}"` : ''}`);
    this.status = answer.status;
    this.heading = heading;
  }
}

/** The redirect target of `answer`. @throws PageError when it is not a redirect. */
export function location(answer: Answer, what: string): URL {
  const value = answer.headers.location;
  if ((answer.status !== 302 && answer.status !== 303) || typeof value !== 'string') {
    throw new PageError(what, answer);
  }
  return new URL(value, 'http://placeholder.invalid');
}

// ---------------------------------------------------------------------------------------------
// Providers: one per persona, behind a front on the issuer's origin.

/** The persona providers and their front. */
export interface Providers {
  origin: string;
  byPersona: Map<string, StartedProvider>;
  /** Which provider issued a code (set by the browser that received it). */
  codeOwner: Map<string, StartedProvider>;
  subjectFor(personaId: string): string;
  close(): Promise<void>;
}

/** The front's connection pool to the providers. */
export const frontAgent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });

/** Where a provider really listens (its baseUrl is the front's origin, the issuer's). */
export function listeningOrigin(provider: StartedProvider): string {
  return `http://127.0.0.1:${(provider.server.address() as AddressInfo).port}`;
}

function forward(
  target: StartedProvider,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<Answer & { raw: Buffer }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, listeningOrigin(target));
    const req = request(url, { method, agent: frontAgent, headers: { ...headers, host: url.host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', raw });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function jsonField(body: Buffer, name: string): string | undefined {
  try {
    const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Start one provider per persona and route the front's requests to them. */
export async function startProviders(rpPublicKey: string, redirectUri: string, front: Server): Promise<Providers> {
  const origin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();
  const subjectSecret = randomBytes(32).toString('base64url');
  const byPersona = new Map<string, StartedProvider>();
  for (const persona of DEFAULT_PERSONAS) {
    byPersona.set(
      persona.id,
      await startProvider({
        baseUrl: origin,
        clients: [
          { clientId: CLIENT_ID, clientSecret: clientSecret, redirectUris: [redirectUri], publicKey: rpPublicKey },
        ],
        autoApprove: persona.id,
        signingKey,
        subjectSecret,
      }),
    );
  }
  const first = byPersona.get(DEFAULT_PERSONAS[0]!.id)!;
  const codeOwner = new Map<string, StartedProvider>();
  const tokenOwner = new Map<string, StartedProvider>();

  front.on('request', (req, res) => {
    const path = req.url ?? '/';
    const route = async (): Promise<void> => {
      const body = await readBody(req);
      let target = first;
      if (path.startsWith('/v2/oauth/token')) {
        const code = jsonField(body, 'code');
        target = (code !== undefined && codeOwner.get(code)) || first;
        if (code !== undefined) codeOwner.delete(code);
      } else if (path.startsWith('/v2/oauth/userinfo')) {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        target = (token !== undefined && tokenOwner.get(token)) || first;
        if (token !== undefined) tokenOwner.delete(token);
      }
      const answer = await forward(target, req.method ?? 'GET', path, req.headers, body);
      if (path.startsWith('/v2/oauth/token') && answer.status === 200) {
        const accessToken = jsonField(answer.raw, 'access_token');
        if (accessToken !== undefined) tokenOwner.set(accessToken, target);
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.raw);
    };
    route().catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });

  return {
    origin,
    byPersona,
    codeOwner,
    subjectFor: (personaId) => first.provider.subjectFor(CLIENT_ID, personaId),
    close: async () => {
      for (const p of byPersona.values()) await p.close();
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

/** The RP's client secret for this run. */
export const clientSecret = randomBytes(24).toString('base64url');

/** The identity number as the profile page shows it. */
export function maskNric(nric: string): string {
  return nric[0] + '*'.repeat(nric.length - 5) + nric.slice(-4);
}

/** A `data-field` of the profile page. */
export function field(html: string, name: string): string | undefined {
  const re = new RegExp(`data-field="${name}"(?: datetime="([^"]*)")?>([^<]*)<`);
  const m = re.exec(html);
  return m === null ? undefined : (m[1] ?? m[2]);
}

/** One complete login in a fresh browser as `persona`; checks the profile page. @throws PageError or Error. */
export async function completeLogin(rpOrigin: string, providers: Providers, persona: Persona): Promise<Browser> {
  const browser = new Browser();
  const authorize = location(await browser.get(`${rpOrigin}/auth/login`), 'GET /auth/login');
  if (authorize.pathname !== '/v2/oauth/authorize')
    throw new Error('GET /auth/login: not sent to the authorization endpoint');
  const provider = providers.byPersona.get(persona.id)!;
  const callback = location(
    await get(`${listeningOrigin(provider)}${authorize.pathname}${authorize.search}`),
    'authorize',
  );
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error('authorize: no code in the redirect');
  providers.codeOwner.set(code, provider);
  const done = location(await browser.get(`${rpOrigin}${callback.pathname}${callback.search}`), 'GET /auth/callback');
  if (done.pathname !== '/profile') throw new Error('GET /auth/callback: not sent to /profile');
  const profile = await browser.get(`${rpOrigin}/profile`);
  if (profile.status !== 200) throw new PageError('GET /profile', profile);
  const shown = {
    name: field(profile.body, 'name'),
    nric: field(profile.body, 'nric'),
    expiry: field(profile.body, 'passport-expiry'),
    sub: field(profile.body, 'sub'),
  };
  if (
    shown.name !== persona['profile.name'] ||
    shown.nric !== maskNric(persona['profile.nric_number']) ||
    shown.expiry !== persona['profile.passport_expiry_date'] ||
    shown.sub !== providers.subjectFor(persona.id)
  ) {
    throw new Error('cross-talk: a profile page shows another person than the one who signed in');
  }
  return browser;
}

/** The p-th percentile of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
