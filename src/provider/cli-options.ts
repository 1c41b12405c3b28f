/**
 * The provider options `nd-id-provider` takes from flags, the clients file and the environment
 * beside the run's own: the variant (`--issuer-path`, `--no-iss`, `--no-userinfo`), lifetimes
 * (`--token-ttl`, `--code-ttl`, `--login-ttl`) and the signing keys (`--signing-key`,
 * `--signing-keys`, `ND_ID_SIGNING_KEY`, `ND_ID_SIGNING_KEYS`: PEM or JWK JSON text). A flag
 * overrides the same option in the clients file; each key is given in one place only.
 */
import type { ProviderOptions, ProviderTtl } from './types.js';

/** What the flags set of these options. */
export interface RehearsalFlags {
  issuerPath?: string;
  noIss: boolean;
  noUserinfo: boolean;
  ttl: ProviderTtl;
  signingKeyFile?: string;
  signingKeysFile?: string;
}

/** The options this file merges. */
export type RehearsalOptions = Partial<
  Pick<ProviderOptions, 'issuerPath' | 'authorizationResponseIss' | 'userinfo' | 'ttl' | 'signingKey' | 'signingKeys'>
>;

/** The flags that take seconds, by name, and the lifetime each sets. */
export const TTL_FLAGS: Readonly<Record<string, keyof ProviderTtl>> = {
  'token-ttl': 'accessToken',
  'code-ttl': 'code',
  'login-ttl': 'authorization',
};

/** Stores a lifetime flag's seconds, or notes the mistake. */
export function readTtlFlag(name: string, value: string, flags: RehearsalFlags, mistakes: string[]): void {
  if (!/^[0-9]{1,5}s?$/.test(value) || Number.parseInt(value, 10) <= 0)
    mistakes.push(`--${name} takes a number of seconds (for example 600); got "${value.slice(0, 64)}"`);
  else flags.ttl[TTL_FLAGS[name]!] = Number.parseInt(value, 10);
}

/** One signing key option from its places: a flag's file, the clients file, the environment. */
function oneKey<T>(
  name: string,
  places: ReadonlyArray<readonly [string, T | undefined]>,
  mistakes: string[],
): T | undefined {
  const given = places.filter(([, value]) => value !== undefined && value !== '');
  if (given.length > 1) mistakes.push(`${name} is given in ${given.map(([where]) => where).join(' and ')}; keep one`);
  return given[0]?.[1];
}

/** The options of the flags, the clients file and the environment, merged. */
export function rehearsalOptions(
  flags: RehearsalFlags,
  file: RehearsalOptions,
  env: Record<string, string | undefined>,
  mistakes: string[],
): RehearsalOptions {
  const out: RehearsalOptions = { ...file };
  if (flags.issuerPath !== undefined) out.issuerPath = flags.issuerPath;
  if (flags.noIss) out.authorizationResponseIss = false;
  if (flags.noUserinfo) out.userinfo = false;
  if (Object.keys(flags.ttl).length > 0) out.ttl = { ...(file.ttl ?? {}), ...flags.ttl };
  const signingKey = oneKey<ProviderOptions['signingKey']>(
    'The RS256 signing key',
    [
      ['--signing-key', flags.signingKeyFile !== undefined ? { file: flags.signingKeyFile } : undefined],
      ['ND_ID_SIGNING_KEY', env['ND_ID_SIGNING_KEY']],
    ],
    mistakes,
  );
  const signingKeys = oneKey<ProviderOptions['signingKeys']>(
    'The signing keys',
    [
      ['--signing-keys', flags.signingKeysFile !== undefined ? { file: flags.signingKeysFile } : undefined],
      ['the clients file', file.signingKeys],
      ['ND_ID_SIGNING_KEYS', env['ND_ID_SIGNING_KEYS']],
    ],
    mistakes,
  );
  delete out.signingKeys;
  if (signingKey !== undefined) out.signingKey = signingKey;
  if (signingKeys !== undefined) out.signingKeys = signingKeys;
  return out;
}
