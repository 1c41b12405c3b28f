/**
 * The diagnosis of a failed callback: from what the request carried (cookies, host, scheme),
 * what the session held and what this process remembers of the logins it started, the most
 * likely reason a callback found no pending login, and what to do about it.
 *
 * Nothing here reads a request: an adapter gathers the {@link CallbackEvidence} (names and
 * flags only, never a cookie value or a state) and this module reasons over it, so every
 * framework gets the same diagnosis.
 */
import { displayHost, wellFormedHost } from './display-host.js';

/** Stable codes of the diagnoses; each has a row in the README's Troubleshooting table. */
export const DIAGNOSIS_CODES = [
  'callback_without_state',
  'cookie_not_sent',
  'cookie_samesite_strict',
  'cookie_secure_over_http',
  'cookie_secure_behind_proxy',
  'host_mismatch',
  'session_not_in_store',
  'no_pending_login',
  'pending_login_other_state',
  'pending_login_other_client',
  'state_already_used',
  'state_in_progress',
  'state_evicted',
  'login_expired',
  'clock_skew',
  'session_not_restored',
  'session_cookie_not_saved',
  'callback_route_mismatch',
  'session_middleware_missing',
  'session_key_shared',
  'session_info_not_kept',
  'pending_login_lost_at_sign_in',
  'client_secret_refused',
  'id_token_expired',
  'id_token_not_yet_valid',
  'private_key_mismatch',
  'response_iss_missing',
  'response_iss_mismatch',
  'client_assertion_refused',
  'dpop_proof_refused',
  'id_token_key_mismatch',
  'provider_not_answering',
  'discovery_field_refused',
  'discovery_other_issuer',
  'id_token_alg_refused',
  'userinfo_unreadable',
] as const;

/** One of {@link DIAGNOSIS_CODES}. */
export type DiagnosisCode = (typeof DIAGNOSIS_CODES)[number];

/** The most likely cause of a failure, and the fix. Contains no secret and no personal data. */
export interface Diagnosis {
  /** A stable code. */
  code: DiagnosisCode;
  /** What most likely happened, for the developer or operator. */
  cause: string;
  /** What to do about it. */
  fix: string;
}

/** What this process remembers of a login it started (see `LoginLedger`). */
export interface LedgerRecord {
  /** When the login started, ms since the epoch. */
  startedAt: number;
  /** Host name (and port) the login was started on, when well-formed (see `wellFormedHost`), else `''`. */
  host: string;
  /** What became of it so far. */
  outcome: 'pending' | 'in_progress' | 'completed' | 'failed' | 'evicted';
  /** When the outcome was recorded, ms since the epoch. */
  outcomeAt: number;
  /** The sanitized same-site path the login was to return to, if any. */
  returnTo?: string;
  /** When another login of the same session completed while this one was pending (a sign-in in another tab). */
  siblingSignedInAt?: number;
}

/** The session cookie's settings, as the session middleware was configured. */
export interface SessionCookieSettings {
  /** `true`, `false`, `'lax'`, `'strict'`, `'none'` as express-session takes it. */
  sameSite?: boolean | 'lax' | 'strict' | 'none' | undefined;
  /** `true`, `false` or `'auto'`. */
  secure?: boolean | 'auto' | undefined;
}

/** What an adapter knows about a callback that found no pending login for its state. */
export interface CallbackEvidence {
  /** Whether the callback carried a non-empty `state`. */
  hasState: boolean;
  /** Whether the request carried any Cookie header at all. */
  cookieHeaderPresent: boolean;
  /** Whether the session cookie (by name) came back. `undefined`: unknown (cookie name not known to the adapter). */
  sessionCookiePresent?: boolean | undefined;
  /** The session cookie came back but the store had no session for it (a fresh session was made). */
  sessionNotInStore?: boolean | undefined;
  /** The session cookie's configuration, when the adapter can read it. */
  cookie?: SessionCookieSettings | undefined;
  /** The callback arrived over https (as the framework sees it, after `trust proxy`). */
  secure: boolean;
  /** `X-Forwarded-Proto` as received, when present. */
  forwardedProto?: string | undefined;
  /** Host name (and port) of the callback request. */
  host: string;
  /** Host (and port) of the registered callback URL this flow sends the service back to, when known. */
  callbackHost?: string | undefined;
  /** Pending logins the session holds for this client and callback. */
  pendingForThisClient: number;
  /** Pending logins the session holds that were started for another client, issuer or callback URL. */
  pendingForOtherClients: number;
  /** Whether the state is bound to another client/issuer/callback in this session. */
  stateBoundElsewhere: boolean;
  /** What this process remembers of the state, if it issued it. */
  ledger?: LedgerRecord | undefined;
  /** The login lifetime in ms. */
  loginTtl: number;
  /** The session key pending logins are kept under, to name it in a fix. */
  sessionKey?: string | undefined;
  /** Now, ms since the epoch. */
  now: number;
}

/**
 * What an adapter tells the flow about the request it handles: names and flags only, never a
 * cookie value. Every field is optional; the more is known, the better the diagnosis.
 */
export type RequestFacts = Partial<
  Pick<
    CallbackEvidence,
    | 'host'
    | 'secure'
    | 'forwardedProto'
    | 'cookieHeaderPresent'
    | 'sessionCookiePresent'
    | 'sessionNotInStore'
    | 'cookie'
  >
>;

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** What a diagnosis sentence names: durations, hosts, options (never a secret or a person). */
type Details = Readonly<Record<string, string>>;
type Text = string | ((d: Details) => string);

/**
 * Every diagnosis this module gives: its cause and its fix, by code. The logic below only picks
 * the code and the details; docs/errors.md explains each code at length.
 */
const CAUSES: Readonly<Partial<Record<DiagnosisCode, { cause: Text; fix: Text }>>> = {
  callback_without_state: {
    cause:
      'The callback carried no state parameter: it was not produced by a login this app started (a hand-made or truncated link).',
    fix: "Start the login from the app's login route; never link to the callback URL directly.",
  },
  cookie_samesite_strict: {
    cause:
      'The session cookie did not come back on the callback: it is SameSite=Strict, and browsers do not send such cookies on the cross-site redirect from the identity service.',
    fix: "Set the session cookie's sameSite to 'lax' (express-session: cookie: { sameSite: 'lax' }).",
  },
  cookie_secure_behind_proxy: {
    cause:
      'The app runs behind a TLS-terminating proxy (X-Forwarded-Proto: https) but treats requests as plain http, so a secure session cookie was never set when the login started.',
    fix: "Tell the framework to trust the proxy (Express: app.set('trust proxy', 1)), so it sees https.",
  },
  cookie_secure_over_http: {
    cause:
      'The session cookie is marked secure, but the app is served over plain http, so the browser never stored it when the login started.',
    fix: "Serve the app over https, or use cookie.secure: 'auto' so the cookie is secure exactly when the request is.",
  },
  host_mismatch: {
    cause: (d) =>
      `The login started on ${d.started} but the callback arrived on ${d.arrived}; cookies are per host, so the session cookie was not sent.`,
    fix: (d) => `Open the app on ${d.callbackHost}, or register a callback URL on the host people use.`,
  },
  cookie_not_sent: {
    cause: (d) =>
      d.cookies === 'other'
        ? 'The callback carried cookies but not the session cookie: the login was started in another browser or profile, the cookie was blocked or cleared, or its name or path differs from what the session middleware expects.'
        : 'The callback carried no cookie at all: the login was started in another browser (or a private window), cookies are blocked, or the login started on another host name than the callback URL.',
    fix: "Start the login on the same host as the registered callback URL, keep the session cookie's path '/' and sameSite 'lax', and check that sessionCookieName matches the session middleware's cookie name.",
  },
  pending_login_lost_at_sign_in: {
    cause: (d) =>
      `This login was still in progress when another tab of the same browser signed in ${d.ago} ago; the session was regenerated at that sign-in without carrying the other tabs' pending logins over, so this one was lost.`,
    fix: (d) =>
      `Carry them over at sign-in (NdIdStrategy does with Passport's req.logIn): @fastify/passport: new Authenticator({ clearSessionIgnoreFields: [${d.key}] }); ` +
      'elsewhere, keep the session key across the regeneration (Passport: keepSessionInfo: true).',
  },
  state_already_used: {
    cause: (d) =>
      `This callback's state was already redeemed ${d.ago} ago: the browser replayed the callback (back button, reload, a double click) or the link was used twice.`,
    fix: 'Nothing to fix in the app; the person should start again. Redirect after sign-in (the router does) so a reload does not replay the callback.',
  },
  state_in_progress: {
    cause:
      'A callback with this state was being redeemed at the same moment (a double submit or a replay racing the first); only one may complete.',
    fix: 'Nothing to fix in the app; the first request completes the sign-in.',
  },
  state_evicted: {
    cause:
      'The login was dropped because the same browser started more logins since (more tabs than maxPendingLogins).',
    fix: 'Raise maxPendingLogins if people legitimately keep many sign-in tabs open; otherwise start again.',
  },
  login_expired: {
    cause: (d) =>
      d.started === undefined
        ? `The login took ${d.took}, longer than loginTtl (${d.ttl}).`
        : `The login started ${d.started} ago, longer than loginTtl (${d.ttl}), and was dropped from the session.`,
    fix: (d) =>
      d.started === undefined
        ? 'The person should start again; raise loginTtl if people regularly need longer.'
        : 'Start again; raise loginTtl if people need longer at the identity service.',
  },
  pending_login_other_client: {
    cause: (d) =>
      d.state === 'bound_elsewhere'
        ? 'The state belongs to a login started for another client, issuer or callback URL (another strategy or registration in this app), so it may not complete here (mix-up defence).'
        : 'The session holds logins started for another client or callback URL, but none for this one.',
    fix: (d) =>
      d.state === 'bound_elsewhere'
        ? 'Give each strategy its own callback route and registered callback URL, and send each login back to the route of the strategy that started it.'
        : 'Check that the login route and the callback route belong to the same strategy.',
  },
  session_not_in_store: {
    cause:
      'The session cookie came back, but the session store has no such session: the store was restarted or lost it, several app instances do not share one store, or the session secret changed.',
    fix: 'Use a shared, persistent session store (e.g. Redis) for every instance, and keep the session secret stable (list a new one first when rotating).',
  },
  pending_login_other_state: {
    cause:
      'The session has a login in progress, but for another state: this callback belongs to an older tab or an earlier attempt that was replaced, or was started in another browser.',
    fix: 'Start again from the tab in use; nothing to fix in the app.',
  },
  no_pending_login: {
    cause: (d) =>
      d.ledger === 'none'
        ? 'The session holds no login in progress and this process did not start this login: it was never started here, started on another instance whose session was not shared, or the session was replaced in between.'
        : 'The session holds no login in progress: the login was completed, evicted or the session was replaced (for example by a sign-out) in between.',
    fix: "Make sure every instance shares one session store and the login starts on this app's login route.",
  },
  session_middleware_missing: {
    cause: 'The request reached the sign-in without a session: no session middleware ran before it.',
    fix: "Mount express-session (or your framework's session) before the sign-in routes: app.use(session({ ... })) before passport and ndIdRouter().",
  },
  id_token_expired: {
    cause: (d) =>
      `${d.agree}, so the clocks are not the cause: the ID token had already expired (exp beyond ${d.tolerance}) when it was checked.`,
    fix: 'Nothing to change in clockTolerance. The person should start again; if it keeps happening, the service issues tokens that expire too soon or the code exchange is delayed (look for slow calls to the token endpoint).',
  },
  id_token_not_yet_valid: {
    cause: (d) =>
      `${d.agree}, so the clocks are not the cause: the ID token's iat or nbf is further in the future than ${d.tolerance} allows.`,
    fix: 'Nothing to change in clockTolerance: the service issued a token dated in the future. The person should start again; report it to the service if it persists.',
  },
  clock_skew: {
    cause: (d) =>
      d.skew === undefined
        ? 'The ID token was refused for its time claims (exp/iat); the service sent no usable Date header to compare clocks with.'
        : `This machine's clock is about ${d.skew} s ${d.direction} the identity service's (measured against its Date header), beyond ${d.tolerance}.`,
    fix: (d) =>
      d.skew === undefined
        ? `Check that this machine's clock is synchronised (NTP); raise ${d.tolerance} only if the service's clock is known to drift.`
        : `Synchronise this machine's clock (NTP); if that is not possible, raise ${d.tolerance} above ${d.skew} s.`,
  },
  dpop_proof_refused: {
    cause:
      "The identity service refused this app's DPoP proof: most often this machine's clock is off (the proof's iat), or a proxy rewrote the URL the proof names (htu).",
    fix: 'Synchronise the clock (NTP); call the service at the hostname it publishes, without a rewriting proxy between. See docs/fapi2.md.',
  },
  client_assertion_refused: {
    cause:
      "The identity service refused this app's client assertion (private_key_jwt): clientAssertionKey is not a key registered for this client (jwks or jwks_uri), or this machine's clock is off.",
    fix: 'Register the public part of clientAssertionKey (serve publicJwks() at your jwks_uri, or paste it into the registration); synchronise the clock. See docs/fapi2.md.',
  },
  id_token_key_mismatch: {
    cause:
      'The encrypted ID token could not be decrypted: idTokenDecryptionKey (or privateKey, its default) is not the key registered for ID-token encryption (use: enc).',
    fix: 'Register the public part of idTokenDecryptionKey as the enc key (publicJwks() lists it), or give the private key that matches the registered one.',
  },
  response_iss_missing: {
    cause:
      'The callback arrived without the iss parameter, though the service advertises that it always sends one: a callback URL made by hand or by a proxy that drops query parameters, or a response from another service (mix-up).',
    fix: 'Pass the whole callback query to the flow (iss included); never rebuild the callback URL. If a proxy is in front of the app, keep the query intact.',
  },
  response_iss_mismatch: {
    cause:
      'The callback names another issuer than the one this app is configured for: the browser came back from another identity service (mix-up), or hostname points at another service than the one the login was sent to.',
    fix: 'Check the hostname option; with several identity services, give each its own callback URL. Refusing the response is right if you use only one.',
  },
  client_secret_refused: {
    cause:
      "The identity service refused this app's client credentials at the token endpoint: clientSecret (or clientId) is not the one registered for this client.",
    fix: 'Check the clientSecret option (and clientId) against your registration with the service; with the local provider, against its clients.json.',
  },
  private_key_mismatch: {
    cause:
      "The person's attributes could not be decrypted: privateKey is not the private key whose public key is registered for this client.",
    fix: 'Check the privateKey option: it must be the private half of the public key registered with the service (with the local provider, the publicKey in its clients.json).',
  },
};

/** The diagnosis `code` with its sentences, filled in with `details`. */
function diagnosis(code: DiagnosisCode, details: Details = {}): Diagnosis {
  const entry = CAUSES[code]!;
  const text = (t: Text): string => (typeof t === 'string' ? t : t(details));
  return { code, cause: text(entry.cause), fix: text(entry.fix) };
}

function cookieNotBack(e: CallbackEvidence): Diagnosis {
  const sameSite = e.cookie?.sameSite;
  if (sameSite === 'strict' || sameSite === true) return diagnosis('cookie_samesite_strict');
  const forwardedHttps =
    e.forwardedProto !== undefined && e.forwardedProto.split(',')[0]?.trim().toLowerCase() === 'https';
  if (!e.secure && forwardedHttps && e.cookie?.secure === true) return diagnosis('cookie_secure_behind_proxy');
  if (!e.secure && e.cookie?.secure === true) return diagnosis('cookie_secure_over_http');
  if (e.ledger !== undefined && e.ledger.host.toLowerCase() !== (wellFormedHost(e.host) ?? '').toLowerCase()) {
    return diagnosis('host_mismatch', {
      started: displayHost(e.ledger.host),
      arrived: displayHost(e.host),
      callbackHost:
        e.callbackHost === undefined
          ? 'the host of the registered callback URL'
          : `${displayHost(e.callbackHost)}, the host of the registered callback URL`,
    });
  }
  return diagnosis('cookie_not_sent', { cookies: e.cookieHeaderPresent ? 'other' : 'none' });
}

function fromLedger(e: CallbackEvidence, record: LedgerRecord): Diagnosis | undefined {
  switch (record.outcome) {
    case 'completed':
    case 'failed':
      return diagnosis('state_already_used', { ago: seconds(e.now - record.outcomeAt) });
    case 'in_progress':
      return diagnosis('state_in_progress');
    case 'evicted':
      return diagnosis('state_evicted');
    case 'pending':
      if (e.now - record.startedAt <= e.loginTtl) return undefined;
      return diagnosis('login_expired', { started: seconds(e.now - record.startedAt), ttl: seconds(e.loginTtl) });
  }
}

/**
 * The most likely reason a callback found no pending login for its state (`state_mismatch`
 * or `session_missing`), and the fix.
 */
export function diagnoseCallback(e: CallbackEvidence): Diagnosis {
  if (!e.hasState) return diagnosis('callback_without_state');
  if (e.stateBoundElsewhere) return diagnosis('pending_login_other_client', { state: 'bound_elsewhere' });
  // Checked before the cookie: an adapter that does not know the session cookie's name cannot tell whether it came back.
  const lostAt = e.ledger?.outcome === 'pending' ? e.ledger.siblingSignedInAt : undefined;
  if (lostAt !== undefined && e.cookieHeaderPresent && e.pendingForThisClient === 0) {
    return diagnosis('pending_login_lost_at_sign_in', {
      ago: seconds(e.now - lostAt),
      key: e.sessionKey === undefined ? "the strategy's sessionKey" : `'${e.sessionKey}'`,
    });
  }
  if (e.sessionCookiePresent === false) return cookieNotBack(e);
  if (e.sessionNotInStore === true) return diagnosis('session_not_in_store');
  const known = e.ledger === undefined ? undefined : fromLedger(e, e.ledger);
  if (known !== undefined) return known;
  if (e.pendingForThisClient > 0) return diagnosis('pending_login_other_state');
  if (e.pendingForOtherClients > 0) return diagnosis('pending_login_other_client');
  return diagnosis('no_pending_login', { ledger: e.ledger === undefined ? 'none' : 'known' });
}

/** Diagnosis of a request that reached the sign-in with no session at all. */
export const SESSION_MIDDLEWARE_MISSING: Diagnosis = Object.freeze(diagnosis('session_middleware_missing'));

/** Diagnosis of a login that took longer than `loginTtl`. */
export function diagnoseExpired(tookMs: number, loginTtl: number): Diagnosis {
  return diagnosis('login_expired', { took: seconds(tookMs), ttl: seconds(loginTtl) });
}

/** The service's `Date` header counts whole seconds: a measured skew may be off by up to this much. */
const DATE_HEADER_PRECISION_MS = 1000;

/**
 * Diagnosis of an ID token refused for its time claims, from the difference between this
 * machine's clock and the service's `Date` header (`skewMs` = our clock − theirs), judged
 * against `clockTolerance`: when the clocks agree within it, the token itself was out of its
 * time window (`refusal`: `id_token_expired` for an expired one), and that is the diagnosis.
 */
export function diagnoseClockSkew(
  skewMs: number | undefined,
  clockToleranceS: number | undefined,
  refusal?: string,
): Diagnosis {
  const tolerance = clockToleranceS === undefined ? 'clockTolerance' : `clockTolerance (${clockToleranceS} s)`;
  const known = skewMs !== undefined && Number.isFinite(skewMs);
  if (known && clockToleranceS !== undefined && Math.abs(skewMs) <= clockToleranceS * 1000 + DATE_HEADER_PRECISION_MS) {
    const agree = `This machine's clock agrees with the identity service's within ${tolerance}`;
    return diagnosis(refusal === 'id_token_expired' ? 'id_token_expired' : 'id_token_not_yet_valid', {
      agree,
      tolerance,
    });
  }
  if (!known) return diagnosis('clock_skew', { tolerance });
  return diagnosis('clock_skew', {
    tolerance,
    skew: String(Math.round(Math.abs(skewMs) / 1000)),
    direction: skewMs > 0 ? 'ahead of' : 'behind',
  });
}

/**
 * Diagnosis of a server-side failure caused by the app's own credentials, naming the option to
 * check: the service refused the client's credentials at the token endpoint (`invalid_client`,
 * `unauthorized_client`), or the userinfo key could not be decrypted with `privateKey`.
 * Undefined for any other failure.
 */
export function diagnoseCredentials(
  code: string,
  oauthError: string | undefined,
  fapi2 = false,
): Diagnosis | undefined {
  // The OAuth error code is in the log's own oauthError field; the page does not repeat it.
  const refusedCall =
    code === 'token_request_failed' || code === 'par_request_failed' || code === 'userinfo_request_failed';
  const clientRefused = oauthError === 'invalid_client' || oauthError === 'unauthorized_client';
  if (refusedCall && oauthError === 'invalid_dpop_proof') return diagnosis('dpop_proof_refused');
  if (fapi2 && (code === 'token_request_failed' || code === 'par_request_failed') && clientRefused)
    return diagnosis('client_assertion_refused');
  if (code === 'id_token_decrypt_failed') return diagnosis('id_token_key_mismatch');
  if (code === 'authorization_response_iss_missing') return diagnosis('response_iss_missing');
  if (code === 'authorization_response_iss_mismatch') return diagnosis('response_iss_mismatch');
  if (code === 'token_request_failed' && clientRefused) return diagnosis('client_secret_refused');
  if (code === 'userinfo_key_decrypt_failed') return diagnosis('private_key_mismatch');
  return undefined;
}

/**
 * Diagnosis of a failure the provider's own answers caused (never the person's): a discovery
 * document that names another issuer or an unusable field, an ID token signed with an algorithm
 * the app does not accept, a userinfo answer that cannot be read. Names the discovery field or
 * the option to change. Undefined for any other failure.
 * @param reason the error's `reason`: for `discovery_invalid`, the discovery field.
 */
export function diagnoseProvider(code: string, reason: string | undefined): Diagnosis | undefined {
  if (code === 'discovery_invalid') {
    const field = reason !== undefined && /^[a-z_]{1,64}$/.test(reason) ? reason : 'an endpoint';
    return {
      code: 'discovery_field_refused',
      cause: `The provider's discovery document gives no usable ${field}: it is missing, not an absolute URL, or not https (plain http is accepted only on loopback, or with allowInsecureHttp on a closed test network).`,
      fix: `Check that the issuer option names the provider you are registered with and that its /.well-known/openid-configuration publishes ${field} as an https URL; ask the provider to publish it.`,
    };
  }
  if (code === 'discovery_issuer_mismatch') {
    return {
      code: 'discovery_other_issuer',
      cause:
        "The provider's discovery document names another issuer than the one this app is configured for (they must be equal, character for character: path and trailing slash included).",
      fix: 'Set the issuer option to the issuer value of the discovery document (for the service of the spec, hostname is its origin, without /v2).',
    };
  }
  if (code === 'id_token_alg_not_allowed') {
    return {
      code: 'id_token_alg_refused',
      cause:
        reason === 'no_common_algorithm'
          ? "None of the algorithms in idTokenSigningAlgorithms is in the provider's id_token_signing_alg_values_supported."
          : 'The provider signed the ID token with an algorithm that is not in idTokenSigningAlgorithms (or not in its own id_token_signing_alg_values_supported).',
      fix: "Add the algorithm the provider signs with to the idTokenSigningAlgorithms option (RS256, PS256, ES256 or EdDSA), or register the client for one of the app's algorithms (id_token_signed_response_alg).",
    };
  }
  if (code === 'userinfo_malformed') {
    return {
      code: 'userinfo_unreadable',
      cause:
        "The provider's userinfo answer could not be read: not the shape its discovery document describes, without sub, or a JWT that does not verify or decrypt.",
      fix: "Check the provider's userinfo_endpoint and the client's registration (userinfo_signed_response_alg, userinfo_encrypted_response_alg); with the 'openid' scope alone, no userinfo is read.",
    };
  }
  return undefined;
}
