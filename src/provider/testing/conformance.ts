/**
 * The offline conformance plan: consecutive authorizations of one client each get the next case,
 * and the app's next move decides it. An ID-token case the app must refuse fails when userinfo is
 * called with its access token and passes when the next authorization comes without that; a
 * positive case the other way round; `state_modified` fails when its code is redeemed; a userinfo
 * case needs a report of whether the browser ended signed in (else inconclusive); an unredeemed
 * or unreached case is `not_run`. A client served no userinfo is judged by reports only; without
 * `iss` in responses, `iss_param_missing` is left out. Only a hash of each access token is kept.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { IdTokenSigningAlg, SigningKeys } from '../crypto.js';
import type { Audit } from './audit.js';
import {
  caseIdToken,
  caseUserinfo,
  CONFORMANCE_CASES,
  type ConformanceCase,
  type ConformanceCaseId,
} from './conformance-cases.js';
import { fapiPlan } from './conformance-fapi-cases.js';
import { textTable } from './text-table.js';

/** The outcome of one case. */
export type ConformanceStatus = 'pass' | 'fail' | 'inconclusive' | 'not_run';

/** One case and its outcome. */
export interface ConformanceCaseResult extends ConformanceCase {
  status: ConformanceStatus;
  /** Why, in one sentence. */
  reason: string;
}

/** The plan's results. */
export interface ConformanceResults {
  /** The client under test. */
  clientId: string | undefined;
  /** True while later authorizations still receive cases. */
  running: boolean;
  cases: ConformanceCaseResult[];
  /** How many cases have each status. */
  summary: Record<ConformanceStatus, number>;
}

/** Control of the plan: `provider.conformance`. */
export interface ConformancePlan {
  /** The cases, in order: those of the client under test (a FAPI 2.0 client gets the extended plan). */
  readonly cases: readonly ConformanceCase[];
  /** Start (or restart) the plan for `clientId` (default: the first registered client). */
  start(options?: { clientId?: string }): void;
  /** The case the latest authorization received, while the plan runs. */
  current(): ConformanceCaseId | undefined;
  /** What the app's test saw: did the browser end signed in after the login of `caseId`? */
  report(caseId: ConformanceCaseId, signedIn: boolean): void;
  /** Stop the plan, deciding the open case as if the next authorization had arrived. */
  finish(): ConformanceResults;
  /** Results so far. */
  results(): ConformanceResults;
  /**
   * Calls `listener` with the final results each time a `POST /_provider/conformance/finish` has been
   * answered. `nd-id-provider` ends its run there, with the verdict's exit status.
   */
  onFinishRequest(listener: (results: ConformanceResults) => void): void;
}

interface Run {
  issued: boolean;
  tokenHash?: string;
  status?: ConformanceStatus;
  reason?: string;
}

const hashOf = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** The plan of one provider, and the hooks the endpoints call. */
export class Conformance implements ConformancePlan {
  #cases: readonly ConformanceCase[] = CONFORMANCE_CASES;
  #clientId: string | undefined;
  #index = -1;
  #running = false;
  #runs = new Map<ConformanceCaseId, Run>();
  #byToken = new Map<string, ConformanceCaseId>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly audit: Audit,
    private readonly clientIds: () => string[],
    /** True for a client registered with `profile: 'fapi2'`: its plan is the extended one. */
    private readonly isFapi: (clientId: string) => boolean = () => false,
    /** What the provider serves: userinfo to this client, and `iss` in authorization responses. */
    private readonly served: { userinfo(clientId: string): boolean; iss: boolean } = {
      userinfo: () => true,
      iss: true,
    },
  ) {}

  get cases(): readonly ConformanceCase[] {
    return this.#cases;
  }

  start(options: { clientId?: string } = {}): void {
    const clientId = options.clientId ?? this.clientIds()[0];
    if (clientId === undefined || !this.clientIds().includes(clientId)) {
      throw new TypeError(`conformance.start: clientId must be a registered client (${this.clientIds().join(', ')}).`);
    }
    this.#clientId = clientId;
    const userinfo = this.served.userinfo(clientId);
    this.#cases = (this.isFapi(clientId) ? fapiPlan(CONFORMANCE_CASES) : CONFORMANCE_CASES).filter(
      (c) => (userinfo || c.level !== 'userinfo') && (this.served.iss || c.id !== 'iss_param_missing'),
    );
    this.#index = -1;
    this.#running = true;
    this.#runs = new Map();
    this.#byToken = new Map();
  }

  readonly #finishListeners: Array<(results: ConformanceResults) => void> = [];

  onFinishRequest(listener: (results: ConformanceResults) => void): void {
    this.#finishListeners.push(listener);
  }

  /** Hook of the finish route: its answer was sent. */
  finishAnswered(results: ConformanceResults): void {
    for (const listener of this.#finishListeners) listener(results);
  }

  current(): ConformanceCaseId | undefined {
    return this.#running ? this.cases[this.#index]?.id : undefined;
  }

  report(caseId: ConformanceCaseId, signedIn: boolean): void {
    const at = this.cases.findIndex((c) => c.id === caseId);
    if (at === -1) throw new TypeError(`conformance.report: unknown case "${String(caseId).slice(0, 64)}".`);
    if (typeof signedIn !== 'boolean') throw new TypeError('conformance.report: signedIn must be true or false.');
    const run = this.#runs.get(caseId);
    if (!run) throw new TypeError(`conformance.report: case "${caseId}" has not been run yet.`);
    if (run.status === 'fail') return; // a userinfo call with a refused token stays a failure
    const expected = this.cases[at]!.expect === 'accept';
    run.status = signedIn === expected ? 'pass' : 'fail';
    run.reason = signedIn ? 'Reported: the browser ended signed in.' : 'Reported: the browser did not end signed in.';
  }

  finish(): ConformanceResults {
    if (this.#running) this.#settle();
    this.#running = false;
    return this.results();
  }

  results(): ConformanceResults {
    const summary: Record<ConformanceStatus, number> = { pass: 0, fail: 0, inconclusive: 0, not_run: 0 };
    const cases = this.cases.map((c, i): ConformanceCaseResult => {
      const run = this.#runs.get(c.id);
      let status: ConformanceStatus = run?.status ?? 'not_run';
      let reason = run?.reason ?? 'The plan did not reach this case.';
      if (run && run.status === undefined) {
        status = 'inconclusive';
        reason =
          i === this.#index && this.#running ? 'Open: waiting for the next authorization or a report.' : 'Not decided.';
      }
      summary[status] += 1;
      return { ...c, status, reason };
    });
    return { clientId: this.#clientId, running: this.#running, cases, summary };
  }

  /** Decide the open case from what did not happen before the next authorization. */
  #settle(): void {
    const c = this.cases[this.#index];
    const run = c ? this.#runs.get(c.id) : undefined;
    if (!c || !run || run.status !== undefined) return;
    if (c.level === 'authorization_response') {
      run.status = 'pass';
      run.reason = 'The app did not redeem the code of this authorization response.';
    } else if (!run.issued) {
      run.status = 'not_run';
      run.reason = 'The app did not redeem the code of this authorization.';
    } else if (c.level === 'userinfo') {
      run.status = 'inconclusive';
      run.reason = 'Nobody reported whether the browser ended signed in.';
    } else if (this.#clientId !== undefined && !this.served.userinfo(this.#clientId)) {
      run.status = 'inconclusive';
      run.reason = 'This client is served no userinfo, and nobody reported whether the browser ended signed in.';
    } else if (c.expect === 'reject') {
      run.status = 'pass';
      run.reason = 'The app did not call userinfo with this access token.';
    } else {
      run.status = 'fail';
      run.reason = 'The app did not call userinfo after a valid ID token.';
    }
  }

  /** Hook of the authorization endpoint: a request of `clientId` that will be answered with a code. */
  authorize(clientId: string): void {
    if (!this.#running || clientId !== this.#clientId) return;
    this.#settle();
    this.#index += 1;
    const c = this.cases[this.#index];
    if (c) this.#runs.set(c.id, { issued: false });
    else this.#running = false;
  }

  /**
   * Hook of the code response (auto-approval, `approveNext` and the phone's approval): the `state`
   * to send back to `clientId`, another one than it sent while its open case is `state_modified`.
   */
  responseState(clientId: string, state: string | undefined): string | undefined {
    if (this.#open(clientId)?.id !== 'state_modified') return state;
    return randomBytes(24).toString('base64url');
  }

  /**
   * Hook of every code response: the `iss` parameter to send (none when the provider is
   * configured to send none), changed or left out while such a case is open.
   */
  responseIss(clientId: string, issuer: string, sendsIss = true): string | undefined {
    const id = this.#open(clientId)?.id;
    if (id === 'iss_param_invalid') return `${issuer}/elsewhere`;
    return id === 'iss_param_missing' || !sendsIss ? undefined : issuer;
  }

  #open(clientId: string): ConformanceCase | undefined {
    return this.#running && clientId === this.#clientId ? this.cases[this.#index] : undefined;
  }

  /** Hook of the token endpoint of a FAPI client: false while `unencrypted_id_token` is open for this access token. */
  encryptsIdToken(accessToken: string): boolean {
    return this.#caseOfToken(accessToken) !== 'unencrypted_id_token';
  }

  /** Hook of the token endpoint: the token response body, changed while a token-response case is open for this access token. */
  tokenBody(accessToken: string, body: Record<string, unknown>): Record<string, unknown> {
    const id = this.#caseOfToken(accessToken);
    if (id === 'token_type_lowercase') return { ...body, token_type: String(body['token_type']).toLowerCase() };
    if (id === 'expires_in_missing')
      return Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'expires_in'));
    return body;
  }

  #caseOfToken(accessToken: string): ConformanceCaseId | undefined {
    return this.#byToken.size === 0 ? undefined : this.#byToken.get(hashOf(accessToken));
  }

  /** Hook of the token endpoint: the ID token to send beside `accessToken` (the genuine one outside a case). */
  async signIdToken(
    clientId: string,
    alg: IdTokenSigningAlg,
    accessToken: string,
    claims: JWTPayload,
  ): Promise<string> {
    const c = this.#running && clientId === this.#clientId ? this.cases[this.#index] : undefined;
    const run = c ? this.#runs.get(c.id) : undefined;
    if (!c || !run || run.issued) return this.keys.sign(claims, alg);
    run.issued = true;
    if (c.level === 'authorization_response') {
      run.status = 'fail';
      run.reason =
        c.id === 'state_modified'
          ? 'The app redeemed the code of an authorization response whose state was not the one it sent.'
          : `The app redeemed the code of an authorization response whose iss parameter was ${c.id === 'iss_param_missing' ? 'missing' : 'another issuer'}.`;
      return this.keys.sign(claims, alg);
    }
    run.tokenHash = hashOf(accessToken);
    this.#byToken.set(run.tokenHash, c.id);
    if (c.level === 'id_token' && c.expect === 'reject') this.audit.markBrokenIdToken(accessToken);
    return c.level === 'id_token' ? caseIdToken(c.id, claims, this.keys.signer(alg)) : this.keys.sign(claims, alg);
  }

  /** Hook of the userinfo endpoint: records the call, and returns the answer to send. */
  async userinfo(
    accessToken: string,
    answer: { sub: string; key: string; data: Record<string, string> },
    clientKey: { kid: string; key: KeyObject },
    attributes: Readonly<Record<string, string>>,
  ): Promise<{ sub: string; key: string; data: Record<string, string> }> {
    if (this.#byToken.size === 0) return answer;
    const id = this.#byToken.get(hashOf(accessToken));
    const c = this.cases.find((k) => k.id === id);
    const run = id !== undefined ? this.#runs.get(id) : undefined;
    if (!c || !run) return answer;
    if (c.level === 'userinfo') return caseUserinfo(c.id, answer, clientKey, attributes);
    if (run.status === undefined) {
      run.status = c.expect === 'accept' ? 'pass' : 'fail';
      run.reason = 'The app called userinfo with the access token issued beside this ID token.';
    }
    return answer;
  }
}

/** The results as a plain-text table: one line per case, then the summary. */
export function formatConformanceTable(results: ConformanceResults): string {
  const rows = results.cases.map((c) => [c.id, c.requirement, c.expect, c.status.toUpperCase(), c.reason]);
  const s = results.summary;
  return (
    [
      `Conformance of ${results.clientId ?? '(no client)'}`,
      ...textTable(['case', 'required', 'expect', 'result', 'why'], rows),
    ].join('\n') + `\n${s.pass} passed, ${s.fail} failed, ${s.inconclusive} inconclusive, ${s.not_run} not run\n`
  );
}
