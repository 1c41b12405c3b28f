/**
 * JSON over HTTP(S) to the provider on node:http (global fetch cost several times the CPU per
 * request, docs/internals.md): a timeout over the whole exchange, a body cap, no redirects, and
 * an IdError code per failure.
 */
import type * as http from 'node:http';
import type * as https from 'node:https';
import { IdError, type IdErrorCode } from '../errors.js';
import { nodeBuiltinsError } from './runtime-check.js';
import { knownOAuthError } from './oauth-error-codes.js';
import { recordHttpStatus } from '../trace.js';

/** Options of {@link HttpClient}. */
export interface HttpClientOptions {
  /** Timeout over the whole exchange (connect, send, receive), in ms. */
  timeout: number;
  /** Largest response body accepted, in bytes. */
  maxResponseBytes: number;
  /** Agent for every request (a proxy agent, a custom CA). Default: one keep-alive agent per protocol. */
  agent?: http.Agent;
}

/** One JSON request. */
export interface JsonRequest {
  method: 'GET' | 'POST';
  url: URL;
  /** What the call is, for error messages: `token endpoint`, `userinfo endpoint`, `JWKS endpoint`. */
  what: string;
  /** The code for a 4xx answer (the provider refused the request). */
  refusedCode: IdErrorCode;
  headers?: Record<string, string>;
  /** Called with the answer's `Date` header, when it has one (used to measure clock skew). */
  onServerDate?: (date: string) => void;
  /** Sent as JSON with `Content-Type: application/json`. */
  body?: unknown;
  /** Sent as `application/x-www-form-urlencoded` instead of `body` (PAR and the token call in the FAPI 2.0 profile). */
  form?: Readonly<Record<string, string>>;
  /** Called with every answer's status and headers, before its status is judged (DPoP nonces, `WWW-Authenticate`). */
  onResponse?: (status: number, headers: http.IncomingHttpHeaders) => void;
  /** Accept `application/jwt` too (a standard userinfo answer): such an answer resolves to its text, a string. */
  jwt?: boolean;
}

/** The provider's OAuth error body, kept as the `cause` of a refused request. */
export interface OAuthErrorBody {
  error: string;
  error_description?: string;
}

interface RawResponse {
  status: number;
  body: Buffer;
  date?: string | undefined;
  headers: http.IncomingHttpHeaders;
}

interface NodeHttp {
  http: typeof http;
  https: typeof https;
}
let nodeHttp: NodeHttp | undefined;

/**
 * node:http and node:https, loaded on the first call to the provider rather than at import: they
 * are most of the client's import cost, which every process start and worker cold start pays.
 * `process.getBuiltinModule` gives the modules themselves, so a later patch of `http.request`
 * (a test mock, a monitoring agent) still reaches the client; `import()` is the fallback.
 */
async function loadNodeHttp(): Promise<NodeHttp> {
  if (nodeHttp !== undefined) return nodeHttp;
  const [h, s] = builtinGetter()
    ? [process.getBuiltinModule('node:http'), process.getBuiltinModule('node:https')]
    : await Promise.all([import('node:http'), import('node:https')]).then(([a, b]) => [a.default ?? a, b.default ?? b]);
  // A bundler's empty stand-in (a worker without nodejs_compat) reads as missing.
  if (
    typeof (h as Partial<typeof http> | undefined)?.request !== 'function' ||
    typeof (s as Partial<typeof https> | undefined)?.request !== 'function'
  ) {
    throw new IdError('provider_unreachable', nodeBuiltinsError('passport-nd-id', ['node:http']).message);
  }
  nodeHttp = { http: h as typeof http, https: s as typeof https };
  return nodeHttp;
}

function builtinGetter(): boolean {
  return typeof (globalThis as { process?: { getBuiltinModule?: unknown } }).process?.getBuiltinModule === 'function';
}

/** Connection errors worth one retry of an idempotent request on a reused keep-alive socket. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** Makes JSON calls to the provider. One per IdClient, holding its keep-alive agents. */
export class HttpClient {
  readonly #timeout: number;
  readonly #maxBytes: number;
  readonly #agent: http.Agent | undefined;
  #httpAgent: http.Agent | undefined;
  #httpsAgent: https.Agent | undefined;

  constructor(options: HttpClientOptions) {
    this.#timeout = options.timeout;
    this.#maxBytes = options.maxResponseBytes;
    this.#agent = options.agent;
  }

  /** Sends the request and returns the parsed JSON body of a 2xx answer. */
  async json(req: JsonRequest): Promise<unknown> {
    const res = await this.#exchange(req);
    const { status } = res;
    recordHttpStatus(status);
    if (res.date !== undefined && req.onServerDate !== undefined) req.onServerDate(res.date);
    if (req.onResponse !== undefined) req.onResponse(status, res.headers);
    if (status >= 300 && status < 400) {
      throw new IdError(
        'provider_redirect_refused',
        `The ${req.what} answered with a redirect (HTTP ${status}); redirects are not followed. Check the hostname option.`,
        { status },
      );
    }
    if (status >= 500) {
      throw new IdError('provider_server_error', `The ${req.what} (${at(req.url)}) failed with HTTP ${status}.`, {
        status,
      });
    }
    if (status < 200 || status >= 300) {
      const cause = oauthError(res.body);
      throw new IdError(
        req.refusedCode,
        `The ${req.what} refused the request with HTTP ${status}` + (cause ? ` (${safeErrorCode(cause.error)}).` : '.'),
        cause ? { status, cause } : { status },
      );
    }
    if (req.jwt === true && /^application\/jwt\s*(;|$)/i.test(res.headers['content-type'] ?? ''))
      return res.body.toString('utf8').trim();
    try {
      return JSON.parse(res.body.toString('utf8')) as unknown;
    } catch {
      throw new IdError('provider_invalid_response', `The ${req.what} answered with a body that is not JSON.`, {
        status,
      });
    }
  }

  /** Ends the idle keep-alive sockets this client opened. */
  close(): void {
    this.#httpAgent?.destroy();
    this.#httpsAgent?.destroy();
  }

  #agentFor(url: URL, { http, https }: NodeHttp): http.Agent {
    if (this.#agent) return this.#agent;
    if (url.protocol === 'https:') return (this.#httpsAgent ??= new https.Agent({ keepAlive: true }));
    return (this.#httpAgent ??= new http.Agent({ keepAlive: true }));
  }

  /** One attempt, and for a GET one retry when the attempt died on a stale keep-alive socket. */
  async #exchange(req: JsonRequest): Promise<RawResponse> {
    const modules = await loadNodeHttp();
    if (req.method !== 'GET') return this.#once(req, false, modules);
    try {
      return await this.#once(req, true, modules);
    } catch (err) {
      if (err instanceof StaleSocketError) return this.#once(req, false, modules);
      throw err;
    }
  }

  /**
   * One request. Rejects only with an IdError, or a StaleSocketError when `retryable` and a reused
   * keep-alive socket died (the retry is not retryable: it may meet another stale socket).
   */
  #once(req: JsonRequest, retryable: boolean, modules: NodeHttp): Promise<RawResponse> {
    const { url, what } = req;
    const { options, payload } = this.#requestOptions(req, modules);
    const isHttps = url.protocol === 'https:';
    const maxBytes = this.#maxBytes;
    const timeout = this.#timeout;

    return new Promise<RawResponse>((resolve, reject) => {
      const exchange = new Exchange(resolve, reject, url, what, maxBytes);
      let request: http.ClientRequest;
      try {
        request = (isHttps ? modules.https : modules.http).request(options);
      } catch (err) {
        exchange.finish(unsent(url, what, err));
        return;
      }
      exchange.startTimer(request, timeout);
      request.on('error', (err: NodeJS.ErrnoException) => exchange.failed(request, retryable, err));
      request.on('response', (res) => exchange.answered(res));
      request.end(payload);
    });
  }

  /** The request's body, headers and Node options: JSON or a form, to this URL, through the right agent. */
  #requestOptions(req: JsonRequest, modules: NodeHttp): { options: http.RequestOptions; payload: string | undefined } {
    const { url } = req;
    const payload =
      req.form !== undefined
        ? new URLSearchParams(req.form).toString()
        : req.body === undefined
          ? undefined
          : JSON.stringify(req.body);
    const contentType = req.form !== undefined ? 'application/x-www-form-urlencoded' : 'application/json';
    const headers: Record<string, string | number> =
      payload === undefined
        ? { Accept: 'application/json' }
        : { Accept: 'application/json', 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) };
    if (req.jwt === true) headers.Accept = 'application/jwt, application/json';
    if (req.headers) Object.assign(headers, req.headers);
    const isHttps = url.protocol === 'https:';
    const options: http.RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? (isHttps ? 443 : 80) : Number(url.port),
      path: url.pathname + url.search,
      method: req.method,
      headers,
      agent: this.#agentFor(url, modules),
      // An app's own agent (the proxy tunnel) bounds the connections it opens by this; our own
      // agents need no socket timeout, the timer below covers the whole exchange.
      ...(this.#agent === undefined ? {} : { timeout: this.#timeout }),
    };
    return { options, payload };
  }
}

/** One request's answer in progress: settled once, by the answer, an error, or the timer. */
class Exchange {
  #settled = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #resolve: (value: RawResponse) => void;
  readonly #reject: (err: Error) => void;
  readonly #url: URL;
  readonly #what: string;
  readonly #maxBytes: number;

  constructor(
    resolve: (value: RawResponse) => void,
    reject: (err: Error) => void,
    url: URL,
    what: string,
    maxBytes: number,
  ) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#url = url;
    this.#what = what;
    this.#maxBytes = maxBytes;
  }

  finish(err: Error | undefined, value?: RawResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    if (err) this.#reject(err);
    else this.#resolve(value as RawResponse);
  }

  /** The whole exchange is bounded by `timeout`: then the request is abandoned. */
  startTimer(request: http.ClientRequest, timeout: number): void {
    this.#timer = setTimeout(() => {
      this.finish(
        new IdError('provider_timeout', `The ${this.#what} (${at(this.#url)}) did not answer within ${timeout} ms.`),
      );
      request.destroy();
    }, timeout);
  }

  /** The request failed: unreachable, or a stale keep-alive socket worth one retry. */
  failed(request: http.ClientRequest, retryable: boolean, err: NodeJS.ErrnoException): void {
    const unreachable = new IdError(
      'provider_unreachable',
      `The ${this.#what} (${at(this.#url)}) could not be reached (${err.code ?? 'network error'}).`,
      {
        cause: err,
      },
    );
    if (retryable && request.reusedSocket && err.code !== undefined && STALE_SOCKET_CODES.has(err.code)) {
      this.finish(new StaleSocketError(unreachable));
    } else {
      this.finish(unreachable);
    }
  }

  /** The answer: its body read up to the byte limit. */
  answered(res: http.IncomingMessage): void {
    const what = this.#what;
    const maxBytes = this.#maxBytes;
    const status = res.statusCode ?? 0;
    const declared = Number(res.headers['content-length']);
    if (declared > maxBytes) {
      this.finish(tooLarge(what, maxBytes, status));
      res.destroy();
      return;
    }
    let first: Buffer | undefined;
    let rest: Buffer[] | undefined;
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        this.finish(tooLarge(what, maxBytes, status));
        res.destroy();
      } else if (first === undefined) {
        first = chunk;
      } else {
        (rest ??= [first]).push(chunk);
      }
    });
    const date = res.headers.date;
    res.on('end', () =>
      this.finish(undefined, {
        status,
        body: rest ? Buffer.concat(rest) : (first ?? EMPTY),
        date,
        headers: res.headers,
      }),
    );
    res.on('error', (err) =>
      this.finish(
        new IdError(
          'provider_unreachable',
          `The connection to the ${what} (${at(this.#url)}) broke during the answer.`,
          {
            cause: err,
          },
        ),
      ),
    );
  }
}

/**
 * Node refused the request before sending (CR/LF in a header, another protocol's agent); its
 * message may quote a header value, so only the code is kept.
 */
function unsent(url: URL, what: string, err: unknown): IdError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const detail = typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'invalid request';
  return new IdError('provider_unreachable', `The request to the ${what} (${at(url)}) could not be sent (${detail}).`);
}

const EMPTY = Buffer.alloc(0);

/** Where a call went, for its error message: origin and path, never the query (it may carry a login's values). */
function at(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** A reused keep-alive socket was closed by the server before our request reached it. */
class StaleSocketError extends Error {
  constructor(readonly unreachable: IdError) {
    super('stale keep-alive socket');
  }
}

function tooLarge(what: string, maxBytes: number, status: number): IdError {
  return new IdError(
    'provider_response_too_large',
    `The ${what} answered with more than ${maxBytes} bytes; raise maxResponseBytes if this is expected.`,
    { status },
  );
}

/** `{ error, error_description }` from a refused request's body, or undefined when it is not one. */
function oauthError(body: Buffer): OAuthErrorBody | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { error, error_description: description } = parsed as Record<string, unknown>;
  if (typeof error !== 'string') return undefined;
  return typeof description === 'string' ? { error, error_description: description } : { error };
}

/** Registered OAuth error codes are repeated in our message; anything else (it could be an echoed secret) is not. */
function safeErrorCode(code: string): string {
  return knownOAuthError(code) ?? 'unrecognised error code';
}
