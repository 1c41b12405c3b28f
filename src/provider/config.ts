/** The provider's options, validated once at start-up; every mistake is reported together, one sentence each. */
import { randomBytes, type KeyObject } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import { isRecord } from '../encoding.js';
import { importRsaPublicKey, rsaThumbprint } from '../keys.js';
import { isLoopbackHost } from '../loopback.js';
import { checkBackchannelLogoutUri } from './backchannel-logout-uri.js';
import { ownOptions, PROVIDER_OPTIONS } from '../options-check.js';
import { checkPersonas, isPositiveInt, unknownKeys } from './config-checks.js';
import { checkFapiRegistration, FAPI_CLIENT_KEYS, type FapiRegistration } from './fapi/registration.js';
import { parsedIfJson } from './key-text.js';
import { checkSigningKeyOptions, type SigningKeyMap } from './signing-key-config.js';
import { movableClock, type MovableClock } from './testing/movable-clock.js';
import type { Persona, ProviderOptions } from './types.js';
import { checkBasePath, checkClientUserinfo, checkVariant, type ProviderVariant } from './variant.js';

/** Default lifetimes, in seconds. */
export const DEFAULT_TTL = Object.freeze({ authorization: 120, code: 60, accessToken: 600, signingKeyGrace: 3600 });
/** Default bound of each store. */
export const DEFAULT_MAX_ENTRIES = 10_000;
/** Default bound of live pending authorizations started from one source address. */
export const DEFAULT_MAX_PENDING_PER_ADDRESS = 20;
/** Longest accepted lifetime, in seconds (one day). */
const MAX_TTL = 86_400;

/** One of a client's public keys, with its key id. */
export interface ClientKey {
  /** The key id: the one given, or the RFC 7638 thumbprint of the key. */
  kid: string;
  key: KeyObject;
}

/** A registered client, ready for use. */
export interface ResolvedClient {
  clientId: string;
  /** The secret of a base client; undefined for a FAPI 2.0 client (private_key_jwt only). */
  clientSecret: string | undefined;
  /** `'fapi2'` for a FAPI 2.0 Security Profile client, `'base'` for the service as the spec describes it. */
  profile: 'base' | 'fapi2';
  /** The FAPI 2.0 registration (keys, ID-token encryption) of a `'fapi2'` client. */
  fapi?: FapiRegistration;
  redirectUris: ReadonlySet<string>;
  /** The client's public keys, oldest first; userinfo is encrypted to the last (newest). Replaced by `setClientKeys`. Empty for a client served no userinfo. */
  publicKeys: readonly ClientKey[];
  /** False when the client is registered with `userinfo: false` (its sign-in is from the ID token alone). */
  userinfo: boolean;
  name: string;
  /** Where logout tokens are POSTed when the person signs out at the provider, when registered. */
  backchannelLogoutUri?: string;
}

/** Checks one client's keys (a PEM, a JWK with its `kid`, or `{ key, kid }`), one mistake per bad key. */
export function resolveClientKeys(
  values: readonly unknown[],
  where: string,
  mistakes: string[],
  single = false,
): ClientKey[] {
  const keys: ClientKey[] = [];
  const kids = new Set<string>();
  values.forEach((given, i) => {
    const at = single ? where : `${where}[${i}]`;
    // A JWK may come as its JSON text, wherever a PEM may (a publicKeyFile, an environment variable).
    const value = parsedIfJson(given, at, mistakes);
    if (value === undefined) return;
    const wrapped = isRecord(value) && 'key' in value;
    const material = wrapped ? parsedIfJson((value as { key: unknown }).key, `${at}.key`, mistakes) : value;
    const givenKid: unknown = wrapped ? (value as { kid?: unknown }).kid : isRecord(value) ? value['kid'] : undefined;
    if (givenKid !== undefined && (typeof givenKid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(givenKid))) {
      mistakes.push(`${at}.kid must be 1 to 128 visible ASCII characters when given`);
      return;
    }
    try {
      const key = importRsaPublicKey(material as string | { kty?: unknown }, wrapped ? `${at}.key` : at);
      const kid = typeof givenKid === 'string' ? givenKid : rsaThumbprint(key);
      if (kids.has(kid)) {
        mistakes.push(`${at} has the kid "${kid}" of another key of the same client`);
        return;
      }
      kids.add(kid);
      keys.push({ kid, key });
    } catch (err) {
      mistakes.push(err instanceof Error ? err.message : `${at} is not a usable RSA public key`);
    }
  });
  return keys;
}

/** The provider's configuration after validation. */
export interface ResolvedConfig extends ProviderVariant {
  /** The service origin. */
  baseUrl: string;
  /** The mount prefix ('' at the root, else `/name...` without a trailing slash). */
  basePath: string;
  /** `baseUrl + basePath`: where the provider's paths start, as seen by browsers and clients. */
  publicBase: string;
  issuer: string;
  clients: ReadonlyMap<string, ResolvedClient>;
  personas: readonly Persona[];
  autoApprove: Persona | undefined;
  ttl: { authorization: number; code: number; accessToken: number; signingKeyGrace: number };
  /** The signing keys given, by algorithm (the others are generated at start-up). */
  signingKeys: SigningKeyMap;
  subjectSecret: Buffer;
  clock: Clock;
  /** The same clock, with the control that moves it forward (`provider.advanceClock`). */
  movableClock: MovableClock;
  maxPending: number;
  maxPendingPerAddress: number;
  maxCodes: number;
  maxAccessTokens: number;
  pollIntervalMs: number;
  log: ((line: string) => void) | undefined;
  faultControl: boolean;
  auditEndpoint: boolean;
  conformance: boolean;
  /** Bearer token the test controls require, when set. */
  controlToken: string | undefined;
  /** Spec-only client authentication at the token endpoint (JSON body only). */
  strictClientAuth: boolean;
  /** The conformance verdict also fails on audit findings. */
  auditStrict: boolean;
  /** FAPI 2.0: DPoP proofs must carry the server's nonce. */
  dpopNonce: boolean;
}

const OPTION_KEYS = new Set<string>(PROVIDER_OPTIONS);
const CLIENT_KEYS = new Set([
  'clientId',
  'clientSecret',
  'redirectUris',
  'publicKey',
  'publicKeys',
  'name',
  'userinfo',
  'backchannelLogoutUri',
  ...FAPI_CLIENT_KEYS,
]);

/** True for `localhost`, a whole dotted quad in 127.0.0.0/8 and `[::1]`: the package's one loopback test. */
export { isLoopbackHost };

function checkBaseUrl(value: unknown, mistakes: string[]): string {
  if (typeof value !== 'string' || value === '') {
    mistakes.push('baseUrl is required: the service origin, e.g. "http://127.0.0.1:4000"');
    return '';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    mistakes.push(`baseUrl "${value}" is not an absolute URL`);
    return '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    mistakes.push(`baseUrl "${value}" must use http or https`);
  } else if (
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== ''
  ) {
    mistakes.push(
      `baseUrl "${value}" must be an origin only (scheme, host and port), with no path, query or credentials`,
    );
  } else if (url.hostname.length > 253) {
    // Also bounds the phone link the QR code carries (842 bytes at most with the longest basePath).
    mistakes.push(
      `baseUrl host name is ${url.hostname.length} characters long; a DNS name has at most 253: use a shorter host name`,
    );
  }
  return url.origin;
}

function checkRedirectUri(uri: unknown, where: string, mistakes: string[]): uri is string {
  if (typeof uri !== 'string' || uri === '') {
    mistakes.push(`${where} must be a non-empty URL string`);
    return false;
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    mistakes.push(`${where} "${uri}" is not an absolute URL`);
    return false;
  }
  if (uri.length > 2048) mistakes.push(`${where} is longer than 2048 characters`);
  if (url.hash !== '' || uri.includes('#')) mistakes.push(`${where} "${uri}" must not contain a fragment (#)`);
  if (url.username !== '' || url.password !== '') mistakes.push(`${where} must not contain credentials`);
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) {
      mistakes.push(
        `${where} "${uri}" uses http on a non-loopback host; use https, or http on localhost, 127.0.0.1 or [::1]`,
      );
    }
  } else if (url.protocol !== 'https:') {
    mistakes.push(`${where} "${uri}" must use https (or http on a loopback host)`);
  }
  return true;
}

function checkClients(value: unknown, mistakes: string[], providerUserinfo = true): Map<string, ResolvedClient> {
  const clients = new Map<string, ResolvedClient>();
  if (!Array.isArray(value) || value.length === 0) {
    mistakes.push('clients must be a non-empty array of { clientId, clientSecret, redirectUris, publicKey, name? }');
    return clients;
  }
  value.forEach((raw: unknown, i) => {
    const where = `clients[${i}]`;
    if (!isRecord(raw)) {
      mistakes.push(`${where} must be an object`);
      return;
    }
    unknownKeys(raw, CLIENT_KEYS, where, mistakes);
    const { clientId, clientSecret, redirectUris, publicKey, publicKeys, name } = raw;
    const { ok: served, userinfo, keyless } = checkClientUserinfo(raw, where, mistakes, providerUserinfo);
    let ok = served;
    if (typeof clientId !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(clientId)) {
      mistakes.push(`${where}.clientId must be 1 to 256 visible ASCII characters`);
      ok = false;
    } else if (clients.has(clientId)) {
      mistakes.push(`${where}.clientId "${clientId}" is a duplicate: each clientId must be registered once`);
      ok = false;
    }
    const before = mistakes.length;
    const fapi = checkFapiRegistration(raw, where, mistakes);
    if (mistakes.length > before) ok = false;
    if (
      fapi === 'base' &&
      (typeof clientSecret !== 'string' || clientSecret.length === 0 || clientSecret.length > 512)
    ) {
      mistakes.push(`${where}.clientSecret must be a string of 1 to 512 characters`);
      ok = false;
    }
    const uris = new Set<string>();
    if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
      mistakes.push(`${where}.redirectUris must be a non-empty array of callback URLs`);
      ok = false;
    } else {
      redirectUris.forEach((uri: unknown, j) => {
        if (checkRedirectUri(uri, `${where}.redirectUris[${j}]`, mistakes)) uris.add(uri);
        else ok = false;
      });
    }
    let keys: ClientKey[] = [];
    if (!keyless && (publicKey === undefined) === (publicKeys === undefined)) {
      mistakes.push(
        `${where} must have exactly one of publicKey (one key) and publicKeys (a non-empty array, newest last)`,
      );
      ok = false;
    } else if (publicKeys !== undefined && (!Array.isArray(publicKeys) || publicKeys.length === 0)) {
      mistakes.push(`${where}.publicKeys must be a non-empty array of PEM strings, JWKs or { key, kid }, newest last`);
      ok = false;
    } else if (!keyless) {
      const before = mistakes.length;
      keys =
        publicKeys !== undefined
          ? resolveClientKeys(publicKeys as unknown[], `${where}.publicKeys`, mistakes)
          : resolveClientKeys([publicKey], `${where}.publicKey`, mistakes, true);
      if (mistakes.length > before) ok = false;
    }
    const logoutMistakes = mistakes.length;
    const backchannelLogoutUri = checkBackchannelLogoutUri(raw.backchannelLogoutUri, where, mistakes, isLoopbackHost);
    if (mistakes.length > logoutMistakes) ok = false;
    if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > 100)) {
      mistakes.push(`${where}.name must be a string of 1 to 100 characters when given`);
      ok = false;
    }
    if (ok && (keys.length > 0 || keyless) && typeof clientId === 'string' && fapi !== undefined) {
      clients.set(clientId, {
        clientId,
        clientSecret: typeof clientSecret === 'string' ? clientSecret : undefined,
        profile: fapi === 'base' ? 'base' : 'fapi2',
        ...(fapi === 'base' ? {} : { fapi }),
        redirectUris: uris,
        publicKeys: keys,
        userinfo,
        name: typeof name === 'string' ? name : clientId,
        ...(backchannelLogoutUri === undefined ? {} : { backchannelLogoutUri }),
      });
    }
  });
  return clients;
}

function checkTtl(value: unknown, mistakes: string[]): ResolvedConfig['ttl'] {
  const ttl = { ...DEFAULT_TTL };
  if (value === undefined) return ttl;
  if (!isRecord(value)) {
    mistakes.push('ttl must be an object { authorization?, code?, accessToken?, signingKeyGrace? } in seconds');
    return ttl;
  }
  unknownKeys(value, new Set(Object.keys(DEFAULT_TTL)), 'ttl', mistakes);
  for (const name of Object.keys(DEFAULT_TTL) as (keyof typeof DEFAULT_TTL)[]) {
    const v = value[name];
    if (v === undefined) continue;
    if (!isPositiveInt(v, MAX_TTL)) mistakes.push(`ttl.${name} must be a whole number of seconds from 1 to ${MAX_TTL}`);
    else (ttl as Record<string, number>)[name] = v;
  }
  return ttl;
}

function checkBound(
  options: Record<string, unknown>,
  name: string,
  fallback: number,
  max: number,
  mistakes: string[],
): number {
  const v = options[name];
  if (v === undefined) return fallback;
  if (!isPositiveInt(v, max)) {
    mistakes.push(`${name} must be a whole number from 1 to ${max}`);
    return fallback;
  }
  return v;
}

/**
 * Validates provider options and resolves defaults.
 * @throws TypeError listing every mistake, one per line. Messages never echo a secret or a key.
 */
export function resolveConfig(options: ProviderOptions): ResolvedConfig {
  const mistakes: string[] = [];
  if (!isRecord(options)) throw new TypeError('createProvider: options must be an object');
  const raw = ownOptions(options) as unknown as Record<string, unknown>;
  unknownKeys(raw, OPTION_KEYS, 'options', mistakes);
  const baseUrl = checkBaseUrl(raw['baseUrl'], mistakes);
  const variant = checkVariant(raw, mistakes);
  const clients = checkClients(raw['clients'], mistakes, variant.userinfo);
  const personas = checkPersonas(raw['personas'], mistakes);

  let autoApprove: Persona | undefined;
  const auto = raw['autoApprove'];
  if (auto === true) autoApprove = personas[0];
  else if (typeof auto === 'string') {
    autoApprove = personas.find((p) => p.id === auto);
    if (!autoApprove) {
      mistakes.push(`autoApprove "${auto}" is not a persona id; known: ${personas.map((p) => p.id).join(', ')}`);
    }
  } else if (auto !== undefined && auto !== false) {
    mistakes.push('autoApprove must be true, false or a persona id');
  }

  const ttl = checkTtl(raw['ttl'], mistakes);
  const signingKeys = checkSigningKeyOptions(raw, mistakes);

  let subjectSecret: Buffer = randomBytes(32);
  const secret = raw['subjectSecret'];
  if (secret !== undefined) {
    if (typeof secret !== 'string' || secret.length < 16) {
      mistakes.push('subjectSecret must be a string of at least 16 characters');
    } else subjectSecret = Buffer.from(secret, 'utf8');
  }

  const baseClock = raw['clock'] ?? systemClock;
  if (typeof baseClock !== 'function') mistakes.push('clock must be a function returning ms since the epoch');
  const clock = movableClock(baseClock as Clock);

  let log: ((line: string) => void) | undefined;
  const logOpt = raw['log'];
  if (logOpt === true) log = (line) => process.stderr.write(`nd-id-provider: ${line}\n`);
  else if (typeof logOpt === 'function') log = logOpt as (line: string) => void;
  else if (logOpt !== undefined && logOpt !== false) mistakes.push('log must be true, false or a function');

  const faultControl = raw['faultControl'] ?? false;
  if (typeof faultControl !== 'boolean') mistakes.push('faultControl must be true or false');
  const auditEndpoint = raw['auditEndpoint'] ?? false;
  if (typeof auditEndpoint !== 'boolean') mistakes.push('auditEndpoint must be true or false');
  const conformance = raw['conformance'] ?? false;
  if (typeof conformance !== 'boolean') mistakes.push('conformance must be true or false');
  const strictClientAuth = raw['strictClientAuth'] ?? false;
  if (typeof strictClientAuth !== 'boolean') mistakes.push('strictClientAuth must be true or false');
  const auditStrict = raw['auditStrict'] ?? false;
  if (typeof auditStrict !== 'boolean') mistakes.push('auditStrict must be true or false');
  const dpopNonce = raw['dpopNonce'] ?? false;
  if (typeof dpopNonce !== 'boolean') mistakes.push('dpopNonce must be true or false');

  const basePath = checkBasePath(raw['basePath'], mistakes);
  const controlToken = raw['controlToken'];
  if (
    controlToken !== undefined &&
    (typeof controlToken !== 'string' || controlToken.length < 16 || controlToken.length > 512)
  ) {
    mistakes.push('controlToken must be a string of 16 to 512 characters (for example from `openssl rand -hex 32`)');
  }

  const maxPending = checkBound(raw, 'maxPending', DEFAULT_MAX_ENTRIES, 1_000_000, mistakes);
  const maxPendingPerAddress = checkBound(
    raw,
    'maxPendingPerAddress',
    DEFAULT_MAX_PENDING_PER_ADDRESS,
    1_000_000,
    mistakes,
  );
  const maxCodes = checkBound(raw, 'maxCodes', DEFAULT_MAX_ENTRIES, 1_000_000, mistakes);
  const maxAccessTokens = checkBound(raw, 'maxAccessTokens', DEFAULT_MAX_ENTRIES, 1_000_000, mistakes);
  const pollIntervalMs = checkBound(raw, 'pollIntervalMs', 1000, 60_000, mistakes);

  if (mistakes.length > 0) {
    throw new TypeError(
      `passport-nd-id provider: the configuration has ${mistakes.length} mistake${mistakes.length === 1 ? '' : 's'}:\n` +
        mistakes.map((m) => `  - ${m}`).join('\n'),
    );
  }
  return {
    baseUrl,
    basePath,
    publicBase: `${baseUrl}${basePath}`,
    issuer: `${baseUrl}${basePath}${variant.issuerPath}`,
    ...variant,
    clients,
    personas,
    autoApprove,
    ttl,
    signingKeys,
    subjectSecret,
    clock: clock.now,
    movableClock: clock,
    maxPending,
    maxPendingPerAddress,
    maxCodes,
    maxAccessTokens,
    pollIntervalMs,
    log,
    faultControl: faultControl === true,
    auditEndpoint: auditEndpoint === true,
    conformance: conformance === true,
    controlToken: typeof controlToken === 'string' ? controlToken : undefined,
    strictClientAuth: strictClientAuth === true,
    auditStrict: auditStrict === true,
    dpopNonce: dpopNonce === true,
  };
}
