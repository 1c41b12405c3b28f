/**
 * `signIn(appBaseUrl, options)`: signs a person in through the app's own routes as a browser
 * would, following redirects with a cookie jar. With `provider` the login is queued with
 * `approveNext`; without, the provider must auto-approve (the persona goes as `login_hint`).
 */
import type { Persona } from '../types.js';
import type { ApproveNextOptions } from './approve-next.js';
import { CookieJar, type StoredCookie } from './cookie-jar.js';
import { navigate, navigationHeaders } from './navigate.js';

/** What `signIn` needs of a provider in this process. */
export interface SignInProvider {
  approveNext(options?: ApproveNextOptions): void;
}

/** Options of {@link signIn}. */
export interface SignInOptions {
  /** Who signs in: a persona id (or a full persona, with `provider`). Default: the provider's first persona. */
  persona?: string | Persona;
  /** The provider to drive with `approveNext`: a provider, or what `createTestProvider()` resolved to. */
  provider?: SignInProvider | { provider: SignInProvider };
  /** Path (and query) of the app's route that starts a login. Default `/auth/login`. */
  loginPath?: string;
  /** With `provider`: only an authorization request of this client takes the login. */
  clientId?: string;
  /** With `provider`: ID-token claims of this login (see `approveNext`). */
  claims?: Record<string, unknown>;
  /** With `provider`: attribute values of this login. */
  data?: Partial<Record<string, string>>;
  /** With `provider`: the person declines (the app receives `error=access_denied`). */
  deny?: boolean;
  /** A jar to use (and fill), e.g. to sign in again in the same "browser". Default: a new one. */
  jar?: CookieJar;
  /** Most redirects to follow. Default 10. */
  maxRedirects?: number;
  /** Extra request headers, over the navigation's (e.g. `user-agent`); `cookie` is the jar's. */
  headers?: Record<string, string>;
}

/** What {@link signIn} resolves to. */
export interface SignInResult {
  /** The first response that is not a redirect: the app's page after the sign-in (its body unread). */
  response: Response;
  /** Its URL. */
  url: string;
  /** Every URL requested, in order (the provider's query strings included). */
  redirects: string[];
  /** The app's cookies after the login (those sent to `appBaseUrl`). */
  cookies: StoredCookie[];
  /** The `Cookie` header for requests to the app, for supertest's `.set('Cookie', ...)` or fetch. */
  cookieHeader: string;
  /** The jar, for more requests as the same browser. */
  jar: CookieJar;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The end of the authorization endpoint's path, under whatever issuer path. */
const AUTHORIZE_PATH = '/oauth/authorize';

function approveTarget(p: SignInOptions['provider']): SignInProvider | undefined {
  if (p === undefined) return undefined;
  if ('approveNext' in p && typeof p.approveNext === 'function') return p;
  if ('provider' in p && typeof p.provider?.approveNext === 'function') return p.provider;
  throw new TypeError(
    'signIn: provider must be a provider (with approveNext) or what createTestProvider() resolved to.',
  );
}

/** The authorize URL with `login_hint` for an auto-approving provider in another process. */
function withLoginHint(url: URL, persona: SignInOptions['persona']): URL {
  if (typeof persona !== 'string' || !url.pathname.endsWith(AUTHORIZE_PATH) || url.searchParams.has('login_hint'))
    return url;
  const hinted = new URL(url);
  hinted.searchParams.set('login_hint', persona);
  return hinted;
}

/**
 * Sign a person in through the app at `appBaseUrl` (its origin, e.g. `http://127.0.0.1:3000`).
 *
 * ```ts
 * const { cookieHeader, response } = await signIn(appBaseUrl, { persona: 'ben', provider: kit });
 * await request(appBaseUrl).get('/me').set('Cookie', cookieHeader).expect(200);
 * ```
 *
 * Each request carries a top-level navigation's headers (`Sec-Fetch-Mode: navigate`,
 * `Sec-Fetch-Dest: document`, `Accept: text/html…`, `Sec-Fetch-Site` as the redirects go), as a
 * person's click on the app's page would.
 *
 * @throws TypeError for unusable options; Error when the redirects do not end (more than
 *   `maxRedirects`); {@link SignInError} (with the `response`) when it ends on anything but the
 *   app's page after the provider: the QR page (no `provider` given and the provider does not
 *   auto-approve), a refusal by the provider, an app that never sent the browser to the provider,
 *   or a 4xx or 5xx answer (with `deny`, only a 5xx), each naming the fix.
 */
export async function signIn(appBaseUrl: string, options: SignInOptions = {}): Promise<SignInResult> {
  let base: URL;
  try {
    base = new URL(appBaseUrl);
  } catch {
    throw new TypeError(
      `signIn: appBaseUrl must be an absolute URL such as http://127.0.0.1:3000; got "${String(appBaseUrl).slice(0, 100)}".`,
    );
  }
  const loginPath = options.loginPath ?? '/auth/login';
  if (typeof loginPath !== 'string' || !loginPath.startsWith('/'))
    throw new TypeError('signIn: loginPath must be a path starting with "/".');
  const maxRedirects = options.maxRedirects ?? 10;
  if (!Number.isInteger(maxRedirects) || maxRedirects < 1)
    throw new TypeError('signIn: maxRedirects must be a whole number of at least 1.');
  const target = approveTarget(options.provider);
  if (
    target === undefined &&
    (options.claims !== undefined ||
      options.data !== undefined ||
      options.deny !== undefined ||
      typeof options.persona === 'object')
  ) {
    throw new TypeError(
      'signIn: claims, data, deny and a full persona need `provider` (they are queued with approveNext).',
    );
  }
  if (target !== undefined) {
    const { persona, clientId, claims, data, deny } = options;
    target.approveNext({
      ...(persona !== undefined ? { persona } : {}),
      ...(clientId !== undefined ? { clientId } : {}),
      ...(claims !== undefined ? { claims } : {}),
      ...(data !== undefined ? { data } : {}),
      ...(deny !== undefined ? { deny } : {}),
    });
  }

  const jar = options.jar ?? new CookieJar();
  const redirects: string[] = [];
  const chain: URL[] = [];
  let url = new URL(loginPath, base);
  for (let hop = 0; ; hop += 1) {
    if (target === undefined) url = withLoginHint(url, options.persona);
    redirects.push(url.toString());
    const cookie = jar.header(url);
    const response = await navigate(url, {
      ...navigationHeaders(base, chain, url),
      ...options.headers,
      ...(cookie !== '' ? { cookie } : {}),
    });
    chain.push(url);
    jar.store(url, response.headers.getSetCookie());
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) {
      checkEnding(response, url, chain, options.deny === true);
      const cookies = jar.cookiesFor(base);
      return { response, url: url.toString(), redirects, cookies, cookieHeader: jar.header(base), jar };
    }
    await response.body?.cancel();
    if (hop + 1 > maxRedirects)
      throw new Error(
        `signIn: more than ${maxRedirects} redirects, the last to ${new URL(location, url).pathname}; is the app redirecting in a loop?`,
      );
    url = new URL(location, url);
  }
}

/** Thrown when a sign-in ends on an answer that is not a signed-in (or, with `deny`, a declined) app page. */
export class SignInError extends Error {
  override readonly name = 'SignInError';
  constructor(
    message: string,
    /** The answer it ended on (its body unread). */
    readonly response: Response,
  ) {
    super(message);
  }
}

/**
 * The last answer must be the app's, after a trip through the provider: not the QR page, not a
 * refusal (4xx or 5xx; with `deny`, only 5xx, as a declined login may end on a 4xx page).
 * Messages name the status and path only: query strings carry codes and states.
 */
function checkEnding(response: Response, url: URL, chain: readonly URL[], deny: boolean): void {
  const atProvider = url.pathname.endsWith(AUTHORIZE_PATH);
  const where = `${response.status} at ${url.origin}${url.pathname}`;
  if (atProvider && response.status === 200) {
    throw new SignInError(
      'signIn: the provider showed its QR page. Pass `provider` (signIn queues the login with approveNext), or start the provider with autoApprove (--auto-approve).',
      response,
    );
  }
  if (atProvider) {
    throw new SignInError(
      `signIn: the provider refused the authorization request (${where}); its page names the error (response.text()).`,
      response,
    );
  }
  if (!chain.some((u) => u.pathname.endsWith(AUTHORIZE_PATH))) {
    throw new SignInError(
      `signIn: the app answered ${where} without sending the browser to the provider's authorization endpoint; is loginPath the route that starts a login?`,
      response,
    );
  }
  if (response.status >= 500 || (!deny && response.status >= 400)) {
    throw new SignInError(
      `signIn: the sign-in ended with ${where}, not a page of the signed-in app${deny ? ' (a declined login may end on a 4xx page, not a 5xx)' : ''}. The app refused the request or failed the callback: see its log; response holds its answer.`,
      response,
    );
  }
}
