/**
 * The active faults and the transformer that bends an endpoint's answer by the one that applies.
 * It sits between every endpoint and the writer, so every endpoint is faulted alike, nothing patched.
 */
import { randomBytes } from 'node:crypto';
import type { ProviderContext } from '../context.js';
import { json, oauthError, RESET, type Answer } from '../http/answer.js';
import type { FailureStyle } from '../router.js';
import type { ProviderEndpoint } from '../types.js';
import { renderErrorPage } from '../views/error-page.js';
import { htmlAnswer } from '../views/html.js';
import { reissueIdToken, strangerKeyReady } from './id-token.js';
import {
  APPLIES_TO,
  FAULT_ENDPOINTS,
  type ActiveFault,
  type Fault,
  type FaultControl,
  type FaultEndpoint,
  type FaultHandle,
  type FaultOptions,
} from './kinds.js';
import { isRecord } from '../../encoding.js';
import { checkFault, checkOptionNames, checkOptions, OPTION_KEYS, snapshot, type FaultEntry } from './validation.js';

/** Most faults active at once, so the HTTP control cannot grow memory without bound. */
const MAX_ACTIVE = 1000;

/** Registers a listener for the client going away; returns its removal. */
export type WhenGone = (listener: () => void) => () => void;

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

/** The answer of a `status` fault, in the endpoint's failure style. */
function faultStatusAnswer(style: FailureStyle, status: number): Answer {
  const unavailable = status === 503;
  const code = unavailable ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  const description = unavailable
    ? 'The service is temporarily unavailable. Try again later.'
    : status >= 500
      ? 'The service failed to handle this request. Try again later.'
      : 'The request was refused.';
  const headers: Record<string, string> = unavailable ? { 'Retry-After': '30' } : {};
  if (style === 'html') return htmlAnswer(status, renderErrorPage(code, description), headers);
  return oauthError(status, code, description, headers);
}

/** The fault layer of one provider. */
export class FaultController implements FaultControl {
  readonly #ctx: ProviderContext;
  #entries: FaultEntry[] = [];
  #nextId = 1;
  /** Cancels the latency waits still running (on close). */
  readonly #waits = new Set<() => void>();

  constructor(ctx: ProviderContext) {
    this.#ctx = ctx;
  }

  inject(fault: Fault, options: FaultOptions = {}): FaultHandle {
    if (!isRecord(fault))
      throw new TypeError('faults: the fault must be an object with a kind, e.g. { kind: "status", status: 503 }');
    const checked = checkOptionNames(options);
    return this.#add(checkFault(fault, []), checked);
  }

  /** Inject from the HTTP control: one object holding the fault's fields and its options together. */
  injectFlat(body: unknown): ActiveFault {
    if (!isRecord(body))
      throw new TypeError('faults: the body must be a JSON object such as {"kind":"status","status":503}');
    const fault = checkFault(body, OPTION_KEYS);
    const handle = this.#add(fault, body);
    return snapshot(this.#entries.find((e) => e.id === handle.id)!);
  }

  #add(fault: Fault, options: Record<string, unknown>): FaultHandle {
    const now = this.#ctx.config.clock();
    const where = checkOptions(fault, options, now);
    this.#prune(now);
    if (this.#entries.length >= MAX_ACTIVE) {
      throw new TypeError(`faults: ${MAX_ACTIVE} faults are already active; clear some first`);
    }
    if (fault.kind === 'unknown_key') void strangerKeyReady().catch(() => undefined);
    const entry: FaultEntry = { id: this.#nextId++, fault, ...where };
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

  active(): ActiveFault[] {
    this.#prune(this.#ctx.config.clock());
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
    this.#prune(this.#ctx.config.clock());
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
   * The answer of one request to `endpoint`: `run` (the endpoint) bent by the fault that applies,
   * if any. Throws only what `run` throws (the caller turns that into a 500).
   */
  async transform(
    endpoint: ProviderEndpoint,
    style: FailureStyle,
    run: () => Answer | Promise<Answer>,
    whenGone: WhenGone,
  ): Promise<Answer> {
    const fault = this.#take(endpoint);
    if (!fault) return run();
    this.#ctx.log(endpoint, `fault injected: ${fault.kind}`);
    switch (fault.kind) {
      case 'latency':
        return (await this.#wait(fault.ms, whenGone)) ? run() : faultStatusAnswer(style, 503);
      case 'status':
        return faultStatusAnswer(style, fault.status);
      case 'reset':
        return RESET;
      case 'non_json':
        return htmlLike(PROXY_PAGE);
      case 'truncated': {
        const answer = await run();
        if (answer.body.type !== 'json') return answer;
        const text = JSON.stringify(answer.body.value) ?? '';
        return {
          ...answer,
          body: {
            type: 'bytes',
            contentType: 'application/json; charset=utf-8',
            bytes: text.slice(0, Math.floor(text.length / 2)),
          },
        };
      }
      case 'rotated_key':
        await this.#ctx.keys.rotate();
        return run();
      case 'issuer_mismatch': {
        const answer = await run();
        const body = answer.body.type === 'json' ? answer.body.value : undefined;
        if (!isRecord(body) || typeof body['issuer'] !== 'string') return answer;
        return json(answer.status, { ...body, issuer: `${body['issuer']}/elsewhere` }, answer.headers);
      }
      case 'sub_mismatch': {
        const answer = await run();
        const body = answer.body.type === 'json' ? answer.body.value : undefined;
        if (!isRecord(body) || typeof body['sub'] !== 'string') return answer;
        return json(answer.status, { ...body, sub: strangerSub() }, answer.headers);
      }
      case 'bad_signature':
      case 'unknown_key':
      case 'expired_id_token':
      case 'wrong_audience': {
        const answer = await run();
        const body = answer.body.type === 'json' ? answer.body.value : undefined;
        if (!isRecord(body) || typeof body['id_token'] !== 'string') return answer;
        const { config, keys } = this.#ctx;
        const sealed = answer.sealedIdToken;
        const reissued = await reissueIdToken(
          { keys, clock: config.clock, accessTokenTtl: config.ttl.accessToken, clientIds: () => config.clients.keys() },
          fault.kind,
          sealed?.jws ?? body['id_token'],
        );
        const idToken = sealed === undefined ? reissued : await sealed.encrypt(reissued);
        // An app that then calls userinfo with this access token never checked the ID token.
        if (typeof body['access_token'] === 'string') this.#ctx.audit.markBrokenIdToken(body['access_token']);
        return json(answer.status, { ...body, id_token: idToken }, answer.headers);
      }
    }
  }

  /** Wait `ms`; false when the client went away or the provider closed first. */
  #wait(ms: number, whenGone: WhenGone): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (waited: boolean): void => {
        clearTimeout(timer);
        stopWatching();
        this.#waits.delete(cancel);
        resolve(waited);
      };
      const cancel = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      timer.unref();
      const stopWatching = whenGone(cancel);
      this.#waits.add(cancel);
    });
  }
}

/** A 200 HTML answer without the provider's own page headers (it stands for someone else's page). */
function htmlLike(html: string): Answer {
  return { status: 200, headers: { 'Cache-Control': 'no-store' }, body: { type: 'html', html } };
}
