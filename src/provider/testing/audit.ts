/**
 * What a relying party did wrong, per client: stable code, sentence, count, first seen. Nothing
 * the client sent is kept, only truncated hashes keyed per provider, in capped sets, so
 * memory stays bounded; unregistered `client_id`s get no findings. Not observable, so not
 * reported: timely decryption, the userinfo `sub` check, tokens kept out of logs.
 */
import { hash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { textTable } from './text-table.js';

/** The stable code of an audit finding. */
export type AuditCode =
  | 'pkce_challenge_reused'
  | 'state_missing'
  | 'state_reused'
  | 'state_weak'
  | 'nonce_missing'
  | 'nonce_reused'
  | 'code_redeemed_twice'
  | 'token_request_without_verifier_match'
  | 'redirect_uri_not_registered'
  | 'client_secret_wrong'
  | 'client_auth_outside_spec'
  | 'id_token_not_checked'
  | 'fapi_raw_authorize_parameters'
  | 'fapi_authorize_parameters_repeated'
  | 'fapi_par_without_dpop_binding'
  | 'fapi_client_secret_sent'
  | 'client_assertion_jti_reused'
  | 'client_assertion_long_lived'
  | 'dpop_proof_jti_reused'
  | 'jti_share_used_up'
  | 'dpop_key_not_bound'
  | 'dpop_bearer_scheme_used'
  | 'id_token_encryption_key_missing'
  | 'backchannel_logout_failed';

/** The sentence of each finding code. */
export const AUDIT_MESSAGES: Readonly<Record<AuditCode, string>> = {
  pkce_challenge_reused:
    'The same code_challenge was sent in two authorization requests: make a fresh code_verifier per login.',
  state_missing: 'An authorization request had no state: send an unguessable state and check it on the callback.',
  state_reused: 'The same state was sent in two authorization requests: make a fresh state per login.',
  state_weak:
    'A state was shorter than 22 characters or not made of A-Z a-z 0-9 - . _ ~: use at least 128 random bits.',
  nonce_missing: 'An authorization request had no nonce: send one and check it in the ID token.',
  nonce_reused: 'The same nonce was sent in two authorization requests: make a fresh nonce per login.',
  code_redeemed_twice: 'An authorization code was redeemed twice: redeem each code once (its tokens were revoked).',
  token_request_without_verifier_match: 'A token request sent a code_verifier that does not match the code_challenge.',
  redirect_uri_not_registered: 'An authorization request named a redirect_uri that is not registered for the client.',
  client_secret_wrong: 'A token request authenticated with a wrong client secret.',
  client_auth_outside_spec:
    'A token request used HTTP Basic or a form body, which the spec does not name (refused with strictClientAuth): send client_id and client_secret in an application/json body.',
  id_token_not_checked:
    'Userinfo was called with the access token of an ID token the provider had made invalid on purpose: the app did not validate the ID token.',
  fapi_raw_authorize_parameters:
    'A FAPI 2.0 client sent its authorization parameters in the authorize URL: push them to the PAR endpoint and send only client_id and request_uri.',
  fapi_authorize_parameters_repeated:
    'A FAPI 2.0 client repeated authorization parameters beside request_uri: the pushed ones were used and these ignored (RFC 9101 section 6.3); send only client_id and request_uri.',
  fapi_par_without_dpop_binding:
    'A FAPI 2.0 pushed request carried neither a DPoP proof nor dpop_jkt: the code was bound to the DPoP key of the token request instead; bind it at PAR so a stolen code is of no use without the key.',
  fapi_client_secret_sent: 'A FAPI 2.0 client sent a client_secret: it must authenticate with private_key_jwt only.',
  client_assertion_jti_reused:
    'A client assertion was sent again with a jti already used: make a fresh assertion, with a new jti, for every request.',
  client_assertion_long_lived:
    'A client assertion expired more than 5 minutes after it was sent: make one per request, with exp about a minute ahead.',
  dpop_proof_jti_reused:
    'A DPoP proof was sent again with a jti already used: make a fresh proof, with a new jti, for every request.',
  jti_share_used_up:
    "A FAPI 2.0 client held its whole share of the provider's store of used jti values (assertions and DPoP proofs not yet expired): it sent far more requests than its logins need, and the next ones were refused (429) until some expired.",
  dpop_key_not_bound:
    'A token request proved a DPoP key other than the one the authorization was bound to (dpop_jkt): use the same key pair for the whole login.',
  dpop_bearer_scheme_used:
    'Userinfo was called with Authorization: Bearer for a DPoP-bound access token: use Authorization: DPoP with a proof carrying ath.',
  id_token_encryption_key_missing:
    'A FAPI 2.0 client\'s JWKS had no key to encrypt its ID token with (use "enc", of the registered algorithm): the token request was refused.',
  backchannel_logout_failed:
    'A logout token POSTed to the backchannelLogoutUri was not answered 200 (refused, unreachable, or no answer within 5 seconds): the person may still be signed in at the app. Answer 200 once the sessions are ended.',
};

/** One finding of the audit. */
export interface AuditFinding {
  /** The client it is about. */
  clientId: string;
  /** Stable code. */
  code: AuditCode;
  /** What went wrong and what to do. */
  message: string;
  /** How many times it was seen. */
  count: number;
  /** When it was first seen (ISO 8601). */
  firstSeen: string;
}

/** What the audit needs to know of an authorization request (the validation result of authorize). */
export type AuthorizeObservation =
  | {
      ok: true;
      request: { clientId: string; state: string | undefined; nonce: string | undefined; codeChallenge: string };
    }
  | { ok: false; code: string };

/** Most hashes kept per client and kind (states, nonces, challenges); the oldest are forgotten first. */
export const AUDIT_HASHES_PER_CLIENT = 1000;
/** Most access tokens remembered as carrying a broken ID token. */
const MAX_BROKEN_TOKENS = 1000;
const STRONG_STATE = /^[A-Za-z0-9\-._~]{22,}$/;

type HashKind = 'state' | 'nonce' | 'challenge';

interface ClientAudit {
  findings: Map<AuditCode, { count: number; firstSeen: number }>;
  seen: Record<HashKind, Set<string>>;
}

/** A set capped at `max` entries, the oldest dropped first. True when `value` was already there. */
function seenBefore(set: Set<string>, value: string, max: number): boolean {
  if (set.has(value)) return true;
  set.add(value);
  if (set.size > max) set.delete(set.values().next().value as string);
  return false;
}

/** The findings of a provider's clients. */
export class Audit {
  /** A secret prefix: the kept hashes cannot be matched against guessed values from outside. */
  readonly #key = randomBytes(32).toString('base64');
  readonly #clients = new Map<string, ClientAudit>();
  readonly #broken = new Set<string>();

  constructor(
    private readonly clock: Clock,
    /** True when the client id is registered. */
    private readonly isRegistered: (clientId: string) => boolean,
    private readonly maxHashes = AUDIT_HASHES_PER_CLIENT,
  ) {}

  #hash(kind: string, value: string): string {
    // Only compared with each other in memory, never shown or sent: a secret-prefixed one-shot
    // SHA-256 serves as well as an HMAC here, for less CPU (three per authorize).
    return hash('sha256', `${this.#key}\0${kind}\0${value}`, 'base64url').slice(0, 22);
  }

  #client(clientId: string): ClientAudit | undefined {
    if (!this.isRegistered(clientId)) return undefined;
    let entry = this.#clients.get(clientId);
    if (!entry) {
      entry = { findings: new Map(), seen: { state: new Set(), nonce: new Set(), challenge: new Set() } };
      this.#clients.set(clientId, entry);
    }
    return entry;
  }

  /** Count one occurrence of `code` for a registered client (others are ignored), and tell the listeners. */
  flag(clientId: string, code: AuditCode): void {
    const entry = this.#client(clientId);
    if (!entry) return;
    const finding = entry.findings.get(code);
    if (finding) finding.count += 1;
    else entry.findings.set(code, { count: 1, firstSeen: this.clock() });
    for (const listener of this.#listeners) listener(clientId, code, finding?.count ?? 1);
  }

  readonly #listeners: Array<(clientId: string, code: AuditCode, count: number) => void> = [];

  /** Calls `listener` on every occurrence of a finding, as it happens (the provider logs them). */
  listen(listener: (clientId: string, code: AuditCode, count: number) => void): void {
    this.#listeners.push(listener);
  }

  #reused(entry: ClientAudit, kind: HashKind, value: string): boolean {
    return seenBefore(entry.seen[kind], this.#hash(kind, value), this.maxHashes);
  }

  /** An authorization request, after validation: its client id as sent, and the outcome. */
  authorize(clientId: string | undefined, result: AuthorizeObservation): void {
    if (!result.ok) {
      if (result.code === 'redirect_uri_mismatch' && clientId !== undefined)
        this.flag(clientId, 'redirect_uri_not_registered');
      return;
    }
    const { request } = result;
    const entry = this.#client(request.clientId);
    if (!entry) return;
    if (request.state === undefined) this.flag(request.clientId, 'state_missing');
    else {
      if (!STRONG_STATE.test(request.state)) this.flag(request.clientId, 'state_weak');
      if (this.#reused(entry, 'state', request.state)) this.flag(request.clientId, 'state_reused');
    }
    if (request.nonce === undefined) this.flag(request.clientId, 'nonce_missing');
    else if (this.#reused(entry, 'nonce', request.nonce)) this.flag(request.clientId, 'nonce_reused');
    if (this.#reused(entry, 'challenge', request.codeChallenge)) this.flag(request.clientId, 'pkce_challenge_reused');
  }

  /** Remember that the ID token issued with this access token was made invalid on purpose. */
  markBrokenIdToken(accessToken: string): void {
    seenBefore(this.#broken, this.#hash('access_token', accessToken), MAX_BROKEN_TOKENS);
  }

  /** True when the access token was marked with {@link markBrokenIdToken}. */
  isBroken(accessToken: string): boolean {
    if (this.#broken.size === 0) return false; // the usual case: no hash to compute
    return this.#broken.has(this.#hash('access_token', accessToken));
  }

  /** A userinfo request with a valid access token of `clientId`. */
  userinfo(clientId: string, accessToken: string): void {
    if (this.isBroken(accessToken)) this.flag(clientId, 'id_token_not_checked');
  }

  /** The findings, of one client or of all, in a stable order (client, then code). */
  findings(clientId?: string): AuditFinding[] {
    const out: AuditFinding[] = [];
    const ids = clientId === undefined ? [...this.#clients.keys()].sort() : [clientId];
    for (const id of ids) {
      const entry = this.#clients.get(id);
      if (!entry) continue;
      for (const code of Object.keys(AUDIT_MESSAGES) as AuditCode[]) {
        const finding = entry.findings.get(code);
        if (!finding) continue;
        out.push({
          clientId: id,
          code,
          message: AUDIT_MESSAGES[code],
          count: finding.count,
          firstSeen: new Date(finding.firstSeen).toISOString(),
        });
      }
    }
    return out;
  }

  /** Forget every finding and hash. */
  clear(): void {
    this.#clients.clear();
    this.#broken.clear();
  }
}

/** The findings as a plain-text table (one line per finding), or a line saying there are none. */
export function formatAuditTable(findings: readonly AuditFinding[]): string {
  if (findings.length === 0) return 'Audit: no findings.\n';
  const rows = findings.map((f) => [f.clientId, f.code, String(f.count), f.firstSeen]);
  const table = textTable(['client', 'finding', 'count', 'first seen'], rows);
  return [`Audit: ${findings.length} finding${findings.length === 1 ? '' : 's'}`, ...table].join('\n') + '\n';
}
