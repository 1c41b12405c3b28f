/**
 * Configuration of the example app, read once from the environment and validated at start-up.
 * Every mistake is collected and reported together, one sentence per variable, so a bad
 * configuration is fixed in one round.
 *
 * Two modes:
 * - **embedded** (no `ND_ID_*` variable set): `npm start` runs the bundled provider on a loopback
 *   port and registers the app with it. Nothing to configure.
 * - **real provider** (any `ND_ID_*` variable set): all of `ND_ID_HOSTNAME`, `ND_ID_CLIENT_ID`,
 *   `ND_ID_CLIENT_SECRET`, `ND_ID_PRIVATE_KEY` or `ND_ID_PRIVATE_KEY_FILE`, `ND_ID_REDIRECT_URI`
 *   and `SESSION_SECRET` are required.
 *   With `ND_ID_PROFILE=fapi2` (the FAPI 2.0 Security Profile, see docs/fapi2.md) the client
 *   secret is replaced by `ND_ID_CLIENT_ASSERTION_KEY` or `ND_ID_CLIENT_ASSERTION_KEY_FILE` (the
 *   EC P-256 private key that signs client assertions); `ND_ID_ID_TOKEN_KEY(_FILE)` (the ID-token
 *   decryption key, default the RSA private key) and `ND_ID_CONTEXT_MESSAGE` (shown on the
 *   approval screen) are optional, and the app serves its public keys at `/auth/jwks.json`.
 * Each key variable holds PEM text or a private JWK's JSON text (first non-space character `{`),
 * such as an entry of the `rp-fapi-private-jwks.json` that `nd-id-provider init --profile fapi2` writes.
 */
import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The scopes the example app asks for unless `ND_ID_SCOPE` says otherwise. */
export const DEFAULT_SCOPE = 'openid profile.name profile.nric_number profile.passport_expiry_date';
/** Shortest accepted `SESSION_SECRET`. */
export const MIN_SESSION_SECRET_LENGTH = 32;
/** Port of the site when `PORT` is unset. */
export const DEFAULT_PORT = 3000;
/** Interface the site listens on when `HOST` is unset. */
export const DEFAULT_HOST = '127.0.0.1';

/** How to reach the identity service as a registered client. */
export interface ProviderSettings {
  /** The service origin, e.g. `https://id.example`. */
  hostname: string;
  clientId: string;
  /** The client secret (base profile). Absent with `profile: 'fapi2'`. */
  clientSecret?: string;
  /** RSA private key: PEM text (PKCS#1 or PKCS#8) or a private JWK's JSON text. */
  privateKey: string;
  /** `'fapi2'` (from `ND_ID_PROFILE`): the FAPI 2.0 Security Profile. Absent: the base profile. */
  profile?: 'fapi2';
  /** FAPI 2.0: the private key that signs client assertions (PEM or JWK JSON text). */
  clientAssertionKey?: string;
  /** FAPI 2.0: the private key ID tokens are encrypted to (PEM or JWK JSON text); absent: `privateKey`. */
  idTokenDecryptionKey?: string;
  /** FAPI 2.0: the message shown on the approval screen. */
  contextMessage?: string;
  /** The registered callback URL. Its path is where the app serves the callback. */
  redirectUri: string;
  /** Space-separated scopes to request. */
  scope: string;
}

/** Settings shared by both modes. */
export interface SiteSettings {
  /** TCP port to listen on (0: any free port). */
  port: number;
  /** Interface to listen on. */
  host: string;
  /** Secrets that sign the session cookie; the first signs, all verify (rotation). */
  sessionSecrets: string[];
  /** Redis connection URL for the session store; absent: in-memory store. */
  redisUrl?: string;
  /** Express `trust proxy` setting (false: not behind a proxy). */
  trustProxy: boolean | number | string;
  /** `LOGIN_TTL_SECONDS` in ms: how long a started login (and its login-only session) lives; absent: 10 minutes. */
  loginTtlMs?: number;
  /** `SESSION_MAX_AGE_SECONDS` in ms: how long a signed-in session lives unused; absent: 8 hours. */
  sessionMaxAgeMs?: number;
  /** `MAX_MEMORY_SESSIONS`: most sessions the in-memory store holds (no Redis only); absent: 20 000. */
  maxMemorySessions?: number;
}

/** Longest accepted `LOGIN_TTL_SECONDS` / `SESSION_MAX_AGE_SECONDS`: 30 days. */
export const MAX_LIFETIME_SECONDS = 30 * 24 * 60 * 60;

/** Result of {@link loadConfig}. */
export type LoadedConfig =
  | {
      mode: 'embedded';
      site: Omit<SiteSettings, 'sessionSecrets'> & { sessionSecrets?: string[] };
      scope: string;
      dataDir: string;
      /** `ND_ID_PROVIDER_PORT`: the built-in provider's port; 0 (the default) picks a free one. */
      providerPort: number;
    }
  | { mode: 'provider'; site: SiteSettings; provider: ProviderSettings };

/** Thrown by {@link loadConfig}: one sentence per mistake in {@link ConfigError.problems}. */
export class ConfigError extends Error {
  /** Each mistake, one sentence each, naming the variable. */
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`The example app cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function value(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** `https`, or `http` on a loopback host only. */
function checkWebUrl(name: string, text: string, problems: string[], what: string): URL | undefined {
  const url = parseUrl(text);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    problems.push(`${name} must be an absolute http(s) URL (${what}); got something that is not`);
    return undefined;
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    problems.push(`${name} must use https (plain http is accepted only on localhost / 127.0.0.1)`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`${name} must not carry a user name or password`);
    return undefined;
  }
  return url;
}

function readPrivateKey(env: Env, problems: string[]): string | undefined {
  const inline = value(env, 'ND_ID_PRIVATE_KEY');
  const file = value(env, 'ND_ID_PRIVATE_KEY_FILE');
  if (inline && file) {
    problems.push('Set only one of ND_ID_PRIVATE_KEY and ND_ID_PRIVATE_KEY_FILE, not both');
    return undefined;
  }
  let pem: string;
  let name: string;
  if (inline) {
    pem = inline;
    name = 'ND_ID_PRIVATE_KEY';
  } else if (file) {
    name = 'ND_ID_PRIVATE_KEY_FILE';
    try {
      pem = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      problems.push(`ND_ID_PRIVATE_KEY_FILE names a file that cannot be read (${code})`);
      return undefined;
    }
  } else {
    problems.push(
      'ND_ID_PRIVATE_KEY (the PEM text) or ND_ID_PRIVATE_KEY_FILE (a path to it) is required: the RSA private key from registration',
    );
    return undefined;
  }
  const read = readKeyText(pem, name, 'expected -----BEGIN PRIVATE KEY----- or -----BEGIN RSA PRIVATE KEY-----');
  if (typeof read === 'string') {
    problems.push(read);
    return undefined;
  }
  const { key, text } = read;
  if (key.asymmetricKeyType !== 'rsa') {
    problems.push(`${name} must hold an RSA private key; it holds a ${key.asymmetricKeyType ?? 'different'} key`);
    return undefined;
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) {
    problems.push(`${name} must hold an RSA key of at least 2048 bits; it has ${bits}`);
    return undefined;
  }
  return text;
}

/**
 * The private key of `raw`: PEM text (literal "\n" escapes, as environment variables often carry,
 * become line breaks), or a private JWK's JSON text (first non-space character `{`, as in the
 * files `nd-id-provider init --profile fapi2` writes), given to IdClient as it is. A sentence
 * naming `name` when it is neither; the key text is never echoed.
 */
function readKeyText(raw: string, name: string, pemHint: string): { key: KeyObject; text: string } | string {
  if (raw.trimStart().startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(raw);
    } catch {
      return `${name} starts with "{" but is not valid JSON: give the private JWK as one JSON object, or the PEM text`;
    }
    if (typeof jwk !== 'object' || jwk === null || typeof (jwk as { d?: unknown }).d !== 'string')
      return `${name} is a JWK without its private member "d": give the private JWK (its public part is what you register)`;
    try {
      return { key: createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }), text: raw.trim() };
    } catch {
      return `${name} is not a readable private JWK`;
    }
  }
  const text = raw.replace(/\\r\\n|\\n/g, '\n').trim() + '\n';
  try {
    return { key: createPrivateKey({ key: text, format: 'pem' }), text };
  } catch {
    return `${name} is not a readable PEM private key (${pemHint}) nor a private JWK's JSON text`;
  }
}

/** A private key from `NAME` (PEM or JWK JSON text) or `NAME_FILE` (a path), checked readable; undefined when absent or wrong. */
function readPemVariable(
  env: Env,
  problems: string[],
  name: string,
  what: string,
  isRequired: boolean,
): string | undefined {
  const inline = value(env, name);
  const file = value(env, `${name}_FILE`);
  if (inline && file) {
    problems.push(`Set only one of ${name} and ${name}_FILE, not both`);
    return undefined;
  }
  let pem = inline;
  if (file) {
    try {
      pem = readFileSync(file, 'utf8');
    } catch (err) {
      problems.push(
        `${name}_FILE names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
      return undefined;
    }
  }
  if (pem === undefined) {
    if (isRequired)
      problems.push(
        `${name} (the PEM text) or ${name}_FILE (a path to it) is required with ND_ID_PROFILE=fapi2: ${what}`,
      );
    return undefined;
  }
  const read = readKeyText(pem, name, 'expected -----BEGIN PRIVATE KEY-----');
  if (typeof read === 'string') {
    problems.push(`${read}: ${what}`);
    return undefined;
  }
  return read.text;
}

function parsePort(env: Env, problems: string[], name = 'PORT', fallback = DEFAULT_PORT): number {
  const text = value(env, name);
  if (text === undefined) return fallback;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    problems.push(`${name} must be a whole number from 0 to 65535`);
    return fallback;
  }
  return Number(text);
}

function parseTrustProxy(env: Env, problems: string[]): boolean | number | string {
  const text = value(env, 'TRUST_PROXY');
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d{1,2}$/.test(text)) return Number(text);
  if (/^[0-9A-Za-z.:/, -]+$/.test(text)) return text; // loopback, uniquelocal, CIDR lists...
  problems.push(
    'TRUST_PROXY must be true, false, a hop count such as 1, or addresses/subnets such as "loopback, 10.0.0.0/8"',
  );
  return false;
}

function parseRedisUrl(env: Env, problems: string[]): string | undefined {
  const text = value(env, 'REDIS_URL');
  if (text === undefined) return undefined;
  const url = parseUrl(text);
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    problems.push('REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379');
    return undefined;
  }
  return text;
}

/** A whole number in [min, max] from `name`, or undefined when unset. */
function parseWhole(
  env: Env,
  problems: string[],
  name: string,
  min: number,
  max: number,
  what: string,
): number | undefined {
  const text = value(env, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (${what})`);
    return undefined;
  }
  return Number(text);
}

/** Session lifetimes and the in-memory bound, shared by both modes. */
function parseSessionLimits(
  env: Env,
  problems: string[],
  redisUrl: string | undefined,
): Pick<SiteSettings, 'loginTtlMs' | 'sessionMaxAgeMs' | 'maxMemorySessions'> {
  const loginTtl = parseWhole(
    env,
    problems,
    'LOGIN_TTL_SECONDS',
    1,
    MAX_LIFETIME_SECONDS,
    'how long a started login stays valid, in seconds',
  );
  const maxAge = parseWhole(
    env,
    problems,
    'SESSION_MAX_AGE_SECONDS',
    1,
    MAX_LIFETIME_SECONDS,
    'how long a signed-in session lasts unused, in seconds',
  );
  const maxSessions = parseWhole(env, problems, 'MAX_MEMORY_SESSIONS', 1, 10_000_000, 'most sessions kept in memory');
  if (maxSessions !== undefined && redisUrl !== undefined) {
    problems.push(
      'MAX_MEMORY_SESSIONS applies only without REDIS_URL (Redis bounds its memory with its own maxmemory); set one of them',
    );
  }
  return {
    ...(loginTtl !== undefined ? { loginTtlMs: loginTtl * 1000 } : {}),
    ...(maxAge !== undefined ? { sessionMaxAgeMs: maxAge * 1000 } : {}),
    ...(maxSessions !== undefined ? { maxMemorySessions: maxSessions } : {}),
  };
}

function parseSessionSecrets(env: Env, problems: string[], required: boolean): string[] | undefined {
  const text = value(env, 'SESSION_SECRET');
  if (text === undefined) {
    if (required) {
      problems.push(
        `SESSION_SECRET is required: a random string of at least ${MIN_SESSION_SECRET_LENGTH} characters that signs the session cookie ` +
          '(e.g. the output of `openssl rand -base64 48`)',
      );
    }
    return undefined;
  }
  // Comma-separated: the first signs new cookies, the others still verify (rotation).
  const secrets = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (secrets.some((s) => s.length < MIN_SESSION_SECRET_LENGTH)) {
    problems.push(
      `SESSION_SECRET must be at least ${MIN_SESSION_SECRET_LENGTH} characters long (each, when comma-separated)`,
    );
    return undefined;
  }
  return secrets;
}

function parseScope(env: Env, problems: string[]): string {
  const text = value(env, 'ND_ID_SCOPE');
  if (text === undefined) return DEFAULT_SCOPE;
  const scopes = text.split(/\s+/);
  if (!scopes.includes('openid')) {
    problems.push('ND_ID_SCOPE must include "openid" (space-separated scopes, e.g. "openid profile.name")');
    return DEFAULT_SCOPE;
  }
  return scopes.join(' ');
}

/**
 * Read and validate the configuration from `env` (default `process.env`).
 * @throws ConfigError listing every missing or invalid variable.
 */
export function loadConfig(env: Env = process.env): LoadedConfig {
  const problems: string[] = [];
  const port = parsePort(env, problems);
  const host = value(env, 'HOST') ?? DEFAULT_HOST;
  const redisUrl = parseRedisUrl(env, problems);
  const trustProxy = parseTrustProxy(env, problems);
  const scope = parseScope(env, problems);
  const limits = parseSessionLimits(env, problems, redisUrl);
  const providerMode = Object.keys(env).some(
    (k) => k.startsWith('ND_ID_') && k !== 'ND_ID_SCOPE' && k !== 'ND_ID_PROVIDER_PORT' && value(env, k) !== undefined,
  );
  const providerPort = parsePort(env, problems, 'ND_ID_PROVIDER_PORT', 0);
  if (providerMode && value(env, 'ND_ID_PROVIDER_PORT') !== undefined) {
    problems.push(
      'ND_ID_PROVIDER_PORT sets the port of the built-in provider only; remove it when signing in with another service (ND_ID_HOSTNAME)',
    );
  }

  if (!providerMode) {
    const sessionSecrets = parseSessionSecrets(env, problems, false);
    if (problems.length > 0) throw new ConfigError(problems);
    return {
      mode: 'embedded',
      site: { port, host, redisUrl, trustProxy, ...limits, ...(sessionSecrets ? { sessionSecrets } : {}) },
      scope,
      dataDir: value(env, 'EXAMPLE_APP_DATA_DIR') ?? '.example-app-data',
      providerPort,
    };
  }

  const required = (name: string, what: string): string | undefined => {
    const v = value(env, name);
    if (v === undefined) problems.push(`${name} is required: ${what}`);
    return v;
  };
  const hostnameText = required('ND_ID_HOSTNAME', 'the identity service origin, e.g. https://id.example');
  const clientId = required('ND_ID_CLIENT_ID', 'the client id issued at registration');
  const profileText = value(env, 'ND_ID_PROFILE');
  if (profileText !== undefined && profileText !== 'fapi2' && profileText !== 'base') {
    problems.push('ND_ID_PROFILE must be "fapi2" (the FAPI 2.0 Security Profile) or "base" (the default)');
  }
  const fapi2 = profileText === 'fapi2';
  const clientSecret = fapi2 ? undefined : required('ND_ID_CLIENT_SECRET', 'the client secret issued at registration');
  if (fapi2 && value(env, 'ND_ID_CLIENT_SECRET') !== undefined) {
    problems.push(
      'ND_ID_CLIENT_SECRET is not used with ND_ID_PROFILE=fapi2 (the app signs client assertions with ND_ID_CLIENT_ASSERTION_KEY); remove it',
    );
  }
  const clientAssertionKey = fapi2
    ? readPemVariable(
        env,
        problems,
        'ND_ID_CLIENT_ASSERTION_KEY',
        'the EC P-256 private key that signs client assertions (see docs/fapi2.md)',
        true,
      )
    : undefined;
  const idTokenDecryptionKey = fapi2
    ? readPemVariable(env, problems, 'ND_ID_ID_TOKEN_KEY', 'the private key ID tokens are encrypted to', false)
    : undefined;
  const contextMessage = value(env, 'ND_ID_CONTEXT_MESSAGE');
  if (contextMessage !== undefined && !fapi2)
    problems.push('ND_ID_CONTEXT_MESSAGE is sent only with ND_ID_PROFILE=fapi2; set that or remove it');
  if (contextMessage !== undefined && [...contextMessage].length > 100)
    problems.push('ND_ID_CONTEXT_MESSAGE must be at most 100 characters');
  const privateKey = readPrivateKey(env, problems);
  const redirectText = required(
    'ND_ID_REDIRECT_URI',
    'the callback URL registered for this app, e.g. https://app.example/auth/callback',
  );
  const sessionSecrets = parseSessionSecrets(env, problems, true);

  let hostname: string | undefined;
  if (hostnameText !== undefined) {
    const url = checkWebUrl('ND_ID_HOSTNAME', hostnameText, problems, 'the identity service origin');
    if (url) {
      if (url.pathname !== '/' || url.search || url.hash) {
        problems.push('ND_ID_HOSTNAME must be an origin only, without a path (the /v2 prefix is added by the library)');
      } else {
        hostname = url.origin;
      }
    }
  }
  let redirectUri: string | undefined;
  if (redirectText !== undefined) {
    const url = checkWebUrl('ND_ID_REDIRECT_URI', redirectText, problems, 'the registered callback URL');
    if (url) {
      if (url.hash) problems.push('ND_ID_REDIRECT_URI must not contain a #fragment');
      else if (url.search) problems.push('ND_ID_REDIRECT_URI must not contain a ?query');
      else if (url.pathname === '/' || url.pathname.startsWith('/auth/login') || url.pathname === '/profile') {
        problems.push('ND_ID_REDIRECT_URI needs a path of its own for the callback, e.g. /auth/callback');
      } else redirectUri = url.href;
      if (url.protocol === 'https:' && trustProxy === false) {
        problems.push(
          'TRUST_PROXY is required when ND_ID_REDIRECT_URI is https: the app serves plain http behind a TLS proxy ' +
            'and must trust it to know the request was secure (e.g. TRUST_PROXY=1 for one proxy hop)',
        );
      }
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    mode: 'provider',
    site: { port, host, redisUrl, trustProxy, ...limits, sessionSecrets: sessionSecrets! },
    provider: {
      hostname: hostname!,
      clientId: clientId!,
      ...(clientSecret === undefined ? {} : { clientSecret }),
      privateKey: privateKey!,
      redirectUri: redirectUri!,
      scope,
      ...(fapi2 ? { profile: 'fapi2' as const } : {}),
      ...(clientAssertionKey === undefined ? {} : { clientAssertionKey }),
      ...(idTokenDecryptionKey === undefined ? {} : { idTokenDecryptionKey }),
      ...(contextMessage === undefined ? {} : { contextMessage }),
    },
  };
}
