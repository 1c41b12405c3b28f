/**
 * Fault injection: make the provider misbehave on purpose, so a relying party can be tested
 * against a slow, failing or lying identity service.
 *
 * A fault applies to the next `times` requests of an endpoint, or for `forMs` milliseconds of
 * the provider's clock (whichever ends first when both are given; the next single request when
 * neither is). Each request meets at most one fault: the oldest active fault that applies to its
 * endpoint, which then uses up one of its `times`. Faults reach the five endpoints a relying
 * party talks to (`authorize`, `token`, `userinfo`, `jwks`, `discovery`); the QR page's own
 * polling and the simulated mobile app are never faulted.
 *
 * Use it in-process through {@link Provider.faults}, or, from another process or language, over
 * HTTP when the provider runs with `faultControl: true` (CLI: `--fault-control`):
 *
 * - `POST /_provider/faults` with a JSON body holding one fault and its options side by side,
 *   e.g. `{"kind":"status","status":503,"endpoint":"token","times":2}`: 201 and the active fault.
 * - `GET /_provider/faults`: 200 and `{ "faults": [...] }`, the active faults.
 * - `DELETE /_provider/faults`: 204, every fault cleared. `DELETE /_provider/faults/{id}`: one.
 *
 * Without `faultControl` these paths answer 404 like any unknown path.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { calculateJwkThumbprint, decodeJwt, exportJWK, SignJWT, type JWTPayload } from 'jose';
import { epochSeconds, type Clock } from '../clock.js';
import type { FailureStyle, ProviderContext, ProviderRoute } from './context.js';
import { generateRsaKeyPair } from './crypto.js';
import { errorStatus, runMiddleware, sendOAuthError } from './http.js';
import type { ProviderEndpoint } from './types.js';
import { renderErrorPage } from './views/error-page.js';
import { sendHtml } from './views/html.js';

/** The endpoints a fault can target. */
export const FAULT_ENDPOINTS = ['authorize', 'token', 'userinfo', 'jwks', 'discovery'] as const;

/** An endpoint a fault can target. */
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

/** Wait `ms` milliseconds (real time), then answer normally. Any endpoint. */
export interface LatencyFault {
  kind: 'latency';
  /** Delay in ms, a whole number from 0 to 600 000. */
  ms: number;
}

/**
 * Answer with this HTTP status instead of handling the request (the request is not processed:
 * a code is not consumed). JSON endpoints get an OAuth error body (`temporarily_unavailable`
 * with `Retry-After` for 503, `server_error` for other 5xx, `invalid_request` for 4xx);
 * authorize gets the provider's HTML error page. Any endpoint.
 */
export interface StatusFault {
  kind: 'status';
  /** A whole number from 400 to 599, typically 500 or 503. */
  status: number;
}

/** Close the connection abruptly (TCP reset) without answering. Any endpoint. */
export interface ResetFault {
  kind: 'reset';
}

/**
 * Handle the request normally, then send only the first half of the JSON body (with a
 * matching Content-Length, so the client sees a complete but unparsable answer).
 * JSON endpoints: token, userinfo, jwks, discovery.
 */
export interface TruncatedFault {
  kind: 'truncated';
}

/**
 * Answer 200 with an HTML page, as an intercepting proxy or captive portal would, instead of
 * handling the request. JSON endpoints: token, userinfo, jwks, discovery.
 */
export interface NonJsonFault {
  kind: 'non_json';
}

/**
 * Faults of the ID token returned by the token endpoint (which otherwise answers normally,
 * so the code is consumed and the access token works):
 *
 * - `bad_signature`: the provider's own header and claims, with a signature that does not
 *   verify (one the provider's key made over other claims).
 * - `rotated_key`: the provider rotates its signing key (for good, as
 *   {@link Provider.rotateSigningKey} does) just before signing, so the token names a `kid`
 *   the client has not cached yet; the new key is published, so a refetch finds it.
 * - `unknown_key`: signed by a key that is never published, under its own `kid`.
 * - `expired_id_token`: `exp` one hour in the past (`iat` one lifetime before that).
 * - `wrong_audience`: `aud` names another client.
 */
export interface IdTokenFault {
  kind: 'bad_signature' | 'rotated_key' | 'unknown_key' | 'expired_id_token' | 'wrong_audience';
}

/** Userinfo answers normally but with another `sub` than the access token's. Userinfo only. */
export interface SubMismatchFault {
  kind: 'sub_mismatch';
}

/** One way for the provider to misbehave. */
export type Fault =
  | LatencyFault
  | StatusFault
  | ResetFault
  | TruncatedFault
  | NonJsonFault
  | IdTokenFault
  | SubMismatchFault;

/** The name of a kind of fault. */
export type FaultKind = Fault['kind'];

/** Which requests a fault applies to, and for how long. */
export interface FaultOptions {
  /**
   * The endpoint, or `'all'` for every endpoint the kind applies to. Default: `'all'` for
   * latency, status, reset, truncated and non_json; `'token'` for ID-token faults;
   * `'userinfo'` for sub_mismatch.
   */
  endpoint?: FaultEndpoint | 'all';
  /** Apply to this many requests (a whole number from 1 to 1 000 000). Default 1 when `forMs` is not given either. */
  times?: number;
  /** Apply for this long, in ms of the provider's clock (1 to 86 400 000). */
  forMs?: number;
}

/** Returned by {@link FaultControl.inject}. */
export interface FaultHandle {
  /** The fault's id, as listed by {@link FaultControl.active} and the HTTP control. */
  readonly id: number;
  /** Remove this fault now (no effect once it has ended). */
  clear(): void;
}

/** An active fault, as listed by {@link FaultControl.active}. A snapshot: changing it changes nothing. */
export interface ActiveFault {
  /** Its id. */
  id: number;
  /** What it does. */
  fault: Fault;
  /** Where it applies. */
  endpoint: FaultEndpoint | 'all';
  /** Requests it still applies to, when it was injected with `times`. */
  remaining?: number;
  /** When it ends (ms since the epoch, provider's clock), when it was injected with `forMs`. */
  expiresAt?: number;
}

/** The fault-injection controls of a provider: {@link Provider.faults}. */
export interface FaultControl {
  /**
   * Make the provider misbehave.
   * @throws TypeError with a sentence naming the mistake, when the fault or the options are not
   *   valid (unknown kind or endpoint, a kind that cannot apply to the endpoint, a bad number),
   *   or when 1 000 faults are already active.
   */
  inject(fault: Fault, options?: FaultOptions): FaultHandle;
  /** Remove every fault. */
  clear(): void;
  /** The faults still active. */
  active(): ActiveFault[];
}

const KINDS: readonly FaultKind[] = [
  'latency',
  'status',
  'reset',
  'truncated',
  'non_json',
  'bad_signature',
  'rotated_key',
  'unknown_key',
  'expired_id_token',
  'wrong_audience',
  'sub_mismatch',
];
const JSON_ENDPOINTS: readonly FaultEndpoint[] = ['token', 'userinfo', 'jwks', 'discovery'];
const APPLIES_TO: Readonly<Record<FaultKind, readonly FaultEndpoint[]>> = {
  latency: FAULT_ENDPOINTS,
  status: FAULT_ENDPOINTS,
  reset: FAULT_ENDPOINTS,
  truncated: JSON_ENDPOINTS,
  non_json: JSON_ENDPOINTS,
  bad_signature: ['token'],
  rotated_key: ['token'],
  unknown_key: ['token'],
  expired_id_token: ['token'],
  wrong_audience: ['token'],
  sub_mismatch: ['userinfo'],
};
const OPTION_KEYS = ['endpoint', 'times', 'forMs'] as const;
const MAX_LATENCY_MS = 600_000;
const MAX_TIMES = 1_000_000;
const MAX_FOR_MS = 86_400_000;
/** Most faults active at once, so the HTTP control cannot grow memory without bound. */
const MAX_ACTIVE = 1000;
/** How far in the past an `expired_id_token` expired, in seconds. */
const EXPIRED_BY_S = 3600;

interface Entry {
  id: number;
  fault: Fault;
  endpoint: FaultEndpoint | 'all';
  remaining: number | undefined;
  expiresAt: number | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function wholeNumber(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`faults: ${name} must be a whole number from ${min} to ${max}; got ${shown(value)}`);
  }
  return value;
}

/** The fault itself, checked and copied. */
function checkFault(raw: Record<string, unknown>, extraAllowed: readonly string[]): Fault {
  const kind = raw['kind'];
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    throw new TypeError(`faults: kind must be one of ${KINDS.join(', ')}; got ${shown(kind)}`);
  }
  const own = kind === 'latency' ? ['ms'] : kind === 'status' ? ['status'] : [];
  for (const key of Object.keys(raw)) {
    if (key !== 'kind' && !own.includes(key) && !extraAllowed.includes(key)) {
      throw new TypeError(
        `faults: a ${kind} fault has no "${key.slice(0, 40)}" field; allowed: ${['kind', ...own, ...extraAllowed].join(', ')}`,
      );
    }
  }
  if (kind === 'latency') return { kind, ms: wholeNumber(raw['ms'], 'latency ms', 0, MAX_LATENCY_MS) };
  if (kind === 'status') return { kind, status: wholeNumber(raw['status'], 'status', 400, 599) };
  return { kind } as Fault;
}

/** Where and how long, checked, for a given fault. */
function checkOptions(
  fault: Fault,
  raw: Record<string, unknown>,
  now: number,
): Pick<Entry, 'endpoint' | 'remaining' | 'expiresAt'> {
  const applies = APPLIES_TO[fault.kind];
  let endpoint: FaultEndpoint | 'all' = applies.length === 1 ? applies[0]! : 'all';
  const given = raw['endpoint'];
  if (given !== undefined) {
    if (given !== 'all' && !(FAULT_ENDPOINTS as readonly string[]).includes(given as string)) {
      throw new TypeError(`faults: endpoint must be one of ${FAULT_ENDPOINTS.join(', ')} or all; got ${shown(given)}`);
    }
    endpoint = given as FaultEndpoint | 'all';
    if (endpoint === 'all' ? applies.length === 1 : !applies.includes(endpoint)) {
      throw new TypeError(`faults: a ${fault.kind} fault applies only to ${applies.join(', ')}; got endpoint ${shown(given)}`);
    }
  }
  const times = raw['times'] === undefined ? undefined : wholeNumber(raw['times'], 'times', 1, MAX_TIMES);
  const forMs = raw['forMs'] === undefined ? undefined : wholeNumber(raw['forMs'], 'forMs', 1, MAX_FOR_MS);
  return {
    endpoint,
    remaining: times ?? (forMs === undefined ? 1 : undefined),
    expiresAt: forMs === undefined ? undefined : now + forMs,
  };
}

function snapshot(entry: Entry): ActiveFault {
  const out: ActiveFault = { id: entry.id, fault: { ...entry.fault }, endpoint: entry.endpoint };
  if (entry.remaining !== undefined) out.remaining = entry.remaining;
  if (entry.expiresAt !== undefined) out.expiresAt = entry.expiresAt;
  return out;
}

/** A signing key of the provider's shape that is never published. */
interface StrangerKey {
  kid: string;
  privateKey: KeyObject;
}

let strangerKey: Promise<StrangerKey> | undefined;

/**
 * The never-published key, one per process, made on first need (an RSA key takes from tens to
 * hundreds of ms to generate, so it is started as soon as an `unknown_key` fault is injected).
 */
function stranger(): Promise<StrangerKey> {
  if (strangerKey === undefined) {
    const made = (async (): Promise<StrangerKey> => {
      const { privateKey, publicKey } = await generateRsaKeyPair();
      return { kid: await calculateJwkThumbprint(await exportJWK(publicKey), 'sha256'), privateKey };
    })();
    // A failure is reported to the request that awaits it; forget it so the next one retries.
    made.catch(() => {
      strangerKey = undefined;
    });
    strangerKey = made;
  }
  return strangerKey;
}

/** The HTML page an intercepting proxy or captive portal puts in place of an API answer. */
const PROXY_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Network access</title></head>
<body>
<h1>Sign in to continue</h1>
<p>Your network requires you to accept its terms of use before you can reach this site.</p>
<p><a href="/">Accept and continue</a></p>
</body>
</html>
`;

/** A `sub` of the same shape as the pairwise ones (43 base64url characters), matching nobody. */
function strangerSub(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The fault layer of one provider: the list of active faults, and how each one bends a
 * request. Internal; users see it as {@link FaultControl}.
 */
export class FaultController implements FaultControl {
  readonly #clock: Clock;
  readonly #ctx: ProviderContext;
  #entries: Entry[] = [];
  #nextId = 1;
  /** Cancels the latency waits still running (on close). */
  readonly #waits = new Set<() => void>();

  constructor(ctx: ProviderContext) {
    this.#ctx = ctx;
    this.#clock = ctx.config.clock;
  }

  inject(fault: Fault, options: FaultOptions = {}): FaultHandle {
    if (!isRecord(fault)) throw new TypeError('faults: the fault must be an object with a kind, e.g. { kind: "status", status: 503 }');
    if (!isRecord(options)) throw new TypeError('faults: options must be an object: { endpoint?, times?, forMs? }');
    for (const key of Object.keys(options)) {
      if (!(OPTION_KEYS as readonly string[]).includes(key)) {
        throw new TypeError(`faults: unknown option "${key.slice(0, 40)}"; allowed: ${OPTION_KEYS.join(', ')}`);
      }
    }
    return this.#add(checkFault(fault, []), options);
  }

  /** Inject from the HTTP control: one object holding the fault's fields and its options together. */
  injectFlat(body: unknown): ActiveFault {
    if (!isRecord(body)) throw new TypeError('faults: the body must be a JSON object such as {"kind":"status","status":503}');
    const fault = checkFault(body, OPTION_KEYS);
    const handle = this.#add(fault, body);
    return snapshot(this.#entries.find((e) => e.id === handle.id)!);
  }

  #add(fault: Fault, options: Record<string, unknown>): FaultHandle {
    const now = this.#clock();
    const where = checkOptions(fault, options, now);
    this.#prune(now);
    if (this.#entries.length >= MAX_ACTIVE) {
      throw new TypeError(`faults: ${MAX_ACTIVE} faults are already active; clear some first`);
    }
    if (fault.kind === 'unknown_key') void stranger().catch(() => undefined);
    const entry: Entry = { id: this.#nextId++, fault, ...where };
    this.#entries.push(entry);
    this.#ctx.config.log?.(`faults: injected ${fault.kind} #${entry.id} on ${entry.endpoint}`);
    return { id: entry.id, clear: () => this.remove(entry.id) };
  }

  /** Remove one fault; false when there was no such active fault. */
  remove(id: number): boolean {
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((e) => e.id !== id);
    return this.#entries.length < before;
  }

  clear(): void {
    this.#entries = [];
  }

  /** True when no fault is injected at all: no request can be bent. */
  get idle(): boolean {
    return this.#entries.length === 0;
  }

  active(): ActiveFault[] {
    this.#prune(this.#clock());
    return this.#entries.map(snapshot);
  }

  /** Forget every fault and end every latency wait (the provider is closing). */
  close(): void {
    this.clear();
    for (const cancel of [...this.#waits]) cancel();
  }

  #prune(now: number): void {
    this.#entries = this.#entries.filter(
      (e) => (e.remaining === undefined || e.remaining > 0) && (e.expiresAt === undefined || now < e.expiresAt),
    );
  }

  /** The fault for a request to `endpoint`, if any, using up one of its `times`. */
  #take(endpoint: ProviderEndpoint): Fault | undefined {
    if (this.#entries.length === 0) return undefined;
    if (!(FAULT_ENDPOINTS as readonly string[]).includes(endpoint)) return undefined;
    const target = endpoint as FaultEndpoint;
    this.#prune(this.#clock());
    const entry = this.#entries.find(
      (e) => (e.endpoint === 'all' || e.endpoint === target) && APPLIES_TO[e.fault.kind].includes(target),
    );
    if (!entry) return undefined;
    if (entry.remaining !== undefined) {
      entry.remaining -= 1;
      if (entry.remaining <= 0) this.remove(entry.id);
    }
    return entry.fault;
  }

  /**
   * Run a route's handler for one request, bent by the fault that applies to it, if any.
   * Throws only what the handler itself throws (the caller turns that into a 500).
   */
  async handle(route: ProviderRoute, req: Request, res: Response): Promise<void> {
    const fault = this.#take(route.endpoint);
    if (!fault) {
      await route.handle(req, res);
      return;
    }
    this.#ctx.log(route.endpoint, `fault injected: ${fault.kind}`);
    switch (fault.kind) {
      case 'latency':
        if (await this.#wait(fault.ms, res)) await route.handle(req, res);
        else if (!res.headersSent && !res.destroyed) sendFaultStatus(res, route.failure, 503);
        return;
      case 'status':
        sendFaultStatus(res, route.failure, fault.status);
        return;
      case 'reset':
        resetConnection(req);
        return;
      case 'non_json':
        res.status(200).set('Cache-Control', 'no-store').type('html').send(PROXY_PAGE);
        return;
      case 'truncated': {
        const captured = await captureJson(route, req, res);
        if (captured === undefined) return;
        const text = JSON.stringify(captured.value) ?? '';
        res.type('application/json').send(text.slice(0, Math.floor(text.length / 2)));
        return;
      }
      case 'rotated_key':
        await this.#ctx.keys.rotate();
        await route.handle(req, res);
        return;
      case 'sub_mismatch': {
        const captured = await captureJson(route, req, res);
        if (captured === undefined) return;
        const body = captured.value;
        res.json(isRecord(body) && typeof body['sub'] === 'string' ? { ...body, sub: strangerSub() } : body);
        return;
      }
      case 'bad_signature':
      case 'unknown_key':
      case 'expired_id_token':
      case 'wrong_audience': {
        const captured = await captureJson(route, req, res);
        if (captured === undefined) return;
        const body = captured.value;
        if (isRecord(body) && typeof body['id_token'] === 'string') {
          const idToken = await this.#reissue(fault.kind, body['id_token']);
          // An app that then calls userinfo with this access token never checked the ID token.
          if (typeof body['access_token'] === 'string') this.#ctx.audit.markBrokenIdToken(body['access_token']);
          res.json({ ...body, id_token: idToken });
        } else {
          res.json(body);
        }
        return;
      }
    }
  }

  /** The claims of a genuine ID token, signed again the way the fault asks. */
  async #reissue(kind: 'bad_signature' | 'unknown_key' | 'expired_id_token' | 'wrong_audience', idToken: string): Promise<string> {
    const claims: JWTPayload = decodeJwt(idToken);
    if (kind === 'bad_signature') {
      // The provider's own key and kid, but a signature made over other claims: a valid-looking
      // RS256 signature that does not verify.
      const other = await this.#ctx.keys.sign({ ...claims, jti: randomBytes(16).toString('base64url') });
      const signingInput = idToken.slice(0, idToken.lastIndexOf('.'));
      return `${signingInput}.${other.slice(other.lastIndexOf('.') + 1)}`;
    }
    if (kind === 'unknown_key') {
      const key = await stranger();
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
    }
    if (kind === 'expired_id_token') {
      const exp = epochSeconds(this.#clock) - EXPIRED_BY_S;
      return this.#ctx.keys.sign({ ...claims, exp, iat: exp - this.#ctx.config.ttl.accessToken });
    }
    const audience = typeof claims.aud === 'string' ? claims.aud : '';
    const other = [...this.#ctx.config.clients.keys()].find((id) => id !== audience) ?? 'another-relying-party';
    return this.#ctx.keys.sign({ ...claims, aud: other });
  }

  /** Wait `ms`; false when the client went away or the provider closed first. */
  #wait(ms: number, res: Response): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (waited: boolean): void => {
        clearTimeout(timer);
        res.off('close', gone);
        this.#waits.delete(cancel);
        resolve(waited);
      };
      const gone = (): void => done(false);
      const cancel = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      timer.unref();
      res.on('close', gone);
      this.#waits.add(cancel);
    });
  }
}

/** Run the handler with `res.json` held back; the body it would have sent, if it sent one. */
async function captureJson(route: ProviderRoute, req: Request, res: Response): Promise<{ value: unknown } | undefined> {
  let captured: { value: unknown } | undefined;
  const original = res.json;
  res.json = function hold(this: Response, value: unknown): Response {
    captured = { value };
    return this;
  };
  try {
    await route.handle(req, res);
  } finally {
    res.json = original;
  }
  return captured;
}

function sendFaultStatus(res: Response, style: FailureStyle, status: number): void {
  const unavailable = status === 503;
  const code = unavailable ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  const description = unavailable
    ? 'The service is temporarily unavailable. Try again later.'
    : status >= 500
      ? 'The service failed to handle this request. Try again later.'
      : 'The request was refused.';
  if (unavailable) res.set('Retry-After', '30');
  if (style === 'html') sendHtml(res, status, renderErrorPage(code, description));
  else sendOAuthError(res, status, code, description);
}

function resetConnection(req: Request): void {
  const socket = req.socket as Request['socket'] & { resetAndDestroy?: () => void };
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

const controlJson = express.json({ limit: 4096, strict: true });

/** The HTTP control of the faults (mounted only with `faultControl: true`). */
export function faultControlRouter(faults: FaultController): Router {
  const router = express.Router();
  const refuse = (res: Response, status: number, description: string): void =>
    sendOAuthError(res, status, 'invalid_request', description);

  router.post('/_provider/faults', async (req, res) => {
    if (!req.is('application/json')) return refuse(res, 415, 'Send the fault as application/json.');
    try {
      await runMiddleware(controlJson, req, res);
    } catch (err) {
      return refuse(res, errorStatus(err) === 413 ? 413 : 400, 'The body is not a JSON object of at most 4096 bytes.');
    }
    try {
      res.status(201).set('Cache-Control', 'no-store').json(faults.injectFlat(req.body));
    } catch (err) {
      refuse(res, 400, err instanceof TypeError ? err.message : 'The fault could not be injected.');
    }
  });
  router.get('/_provider/faults', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ faults: faults.active() });
  });
  router.delete('/_provider/faults', (_req, res) => {
    faults.clear();
    res.status(204).end();
  });
  router.delete('/_provider/faults/:id', (req, res) => {
    const id = Number(req.params['id']);
    if (Number.isInteger(id) && faults.remove(id)) res.status(204).end();
    else res.status(404).set('Cache-Control', 'no-store').json({ error: 'not_found', error_description: 'No such active fault.' });
  });
  return router;
}
