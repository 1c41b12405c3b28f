/**
 * No option is silently ignored: a typo in a security setting would fall back to its default
 * without a word. Every public constructor checks its option names here and refuses an unknown one
 * naming the nearest valid name and where the setting lives. Each caller proves at compile time
 * that its list matches its options type ({@link SameKeys}).
 */

/** A TypeError `"<who>: <option> <what>"`: the one form of every option mistake. */
export function optionError(who: string, option: string, what: string): TypeError {
  return new TypeError(`${who}: ${option} ${what}`);
}

/** {@link optionError} with `who` given once, for a module whose messages all start with it. */
export function optionErrorOf(who: string): (option: string, what: string) => TypeError {
  return (option, what) => optionError(who, option, what);
}

const ID_CLIENT = [
  'clientId',
  'clientSecret',
  'privateKey',
  'redirectUri',
  'hostname',
  'allowInsecureHttp',
  'logger',
  'timeout',
  'maxResponseBytes',
  'clockTolerance',
  'clock',
  'agent',
  'jwksCooldown',
  'jwksCacheMaxAge',
  'profile',
  'clientAssertionKey',
  'idTokenDecryptionKey',
  'idTokenEncryptedResponseAlg',
  'idTokenEncryptedResponseEnc',
  'dpopKey',
  'authenticationContextMessage',
  'retiredPublicKeys',
  'issuer',
  'idTokenSigningAlgorithms',
  'requireIssParameter',
  'authorizationParams',
  'authenticationContextType',
] as const;
const LOGIN_FLOW = [
  'client',
  'redirectUri',
  'scope',
  'sessionKey',
  'maxPendingLogins',
  'loginTtl',
  'clock',
  'replayStore',
  'logger',
  'clockTolerance',
] as const;
const ACCESS = ['loginPath', 'api'] as const;
const REQUIRE_SIGN_IN = ['sessions', 'sessionCookieName', ...ACCESS] as const;
/** The provider's options beside its address and its clients (which a test provider makes itself). */
const PROVIDER_TUNING = [
  'personas',
  'autoApprove',
  'ttl',
  'signingKey',
  'signingKeys',
  'subjectSecret',
  'clock',
  'maxPending',
  'maxPendingPerAddress',
  'maxCodes',
  'maxAccessTokens',
  'pollIntervalMs',
  'log',
  'faultControl',
  'auditEndpoint',
  'conformance',
  'basePath',
  'controlToken',
  'strictClientAuth',
  'auditStrict',
  'dpopNonce',
  'issuerPath',
  'authorizationResponseIss',
  'userinfo',
] as const;
/** Every option of the provider's configuration (`resolveConfig`), which checks them with this list. */
export const PROVIDER_OPTIONS = ['baseUrl', 'clients', ...PROVIDER_TUNING] as const;

/** Every option of each public constructor and factory, under the call a person writes. */
export const OPTIONS_OF = {
  'createSessionPolicy()': [
    'maxSessionAge',
    'idleTimeout',
    'touchInterval',
    'signOutStore',
    'recordKey',
    'clock',
    'logger',
  ],
  'ndIdRouter()': [
    'strategyName',
    'passport',
    'routes',
    'successRedirect',
    'failureRedirect',
    'logoutRedirect',
    'sessionCookieName',
    'afterCallback',
    'errorPage',
    'renderFailure',
    'sessions',
    'publishKeys',
    'authenticationContextMessage',
    'authorizationParams',
    'backchannelLogout',
  ],
  'new NdIdStrategy()': [
    ...ID_CLIENT,
    'callbackURL',
    'scope',
    'sessionKey',
    'maxPendingLogins',
    'loginTtl',
    'verifyTimeout',
    'replayStore',
    'client',
    'passReqToCallback',
    'sessions',
  ],
  'new IdClient()': ID_CLIENT,
  'createLoginFlow()': LOGIN_FLOW,
  'createFetchLogin()': [
    ...LOGIN_FLOW,
    'session',
    'successRedirect',
    'userKey',
    'toSessionUser',
    'loginPath',
    'showDiagnosis',
    'sessions',
  ],
  'ndIdFastify()': [
    ...LOGIN_FLOW,
    'sessions',
    'successRedirect',
    'logoutRedirect',
    'loginPath',
    'userKey',
    'toSessionUser',
    'showDiagnosis',
    'backchannelLogout',
  ],
  'ndIdFastifyGuards()': ['sessions', 'loginPath', 'userKey'],
  'createBackchannelLogout()': ['client', 'sessions', 'replayStore', 'maxTokenAge', 'logger'],
  'createCookieSession()': ['secret', 'cookieName', 'maxAge', 'secure', 'path', 'clock'],
  'requireSignIn()': REQUIRE_SIGN_IN,
  'ndIdSignInGuard()': [...REQUIRE_SIGN_IN, 'recentSeconds'],
  'auth.requireSignIn()': ACCESS,
  'ndIdGuardResult()': ['retryHref'],
  'createMemoryReplayStore()': ['maxKeys', 'clock'],
  'createRedisReplayStore()': ['prefix'],
  'createMemorySignOutStore()': ['maxEntries', 'clock'],
  'signOutEverywhere()': ['issuer'],
  'createRedisSignOutStore()': ['prefix'],
  'createProvider()': PROVIDER_OPTIONS,
  'startProvider()': [...PROVIDER_OPTIONS, 'port', 'host'],
  'createTestProvider()': [
    ...PROVIDER_TUNING,
    'redirectUri',
    'clientId',
    'clientSecret',
    'clientName',
    'freshKeys',
    'port',
    'profile',
    'idTokenEncryptedResponseAlg',
    'idTokenEncryptedResponseEnc',
    'idTokenSignedResponseAlg',
    'clientUserinfo',
    'backchannelLogoutUri',
  ],
} as const satisfies Record<string, readonly string[]>;

/** A constructor or factory whose options are checked. */
export type OptionOwner = keyof typeof OPTIONS_OF;

/**
 * `true` when the list `L` names exactly the keys of `T` (of every member, for a union); a
 * compile error at the caller otherwise: `const _: SameKeys<RouterOptions, typeof OPTIONS_OF['ndIdRouter()']> = true`.
 */
export type SameKeys<T, L extends readonly string[]> = [
  Exclude<KeysOf<T>, L[number]>,
  Exclude<L[number], KeysOf<T>>,
] extends [never, never]
  ? true
  : false;
type KeysOf<T> = T extends unknown ? Extract<keyof T, string> : never;

/** How to give a setting that lives elsewhere, by its home; `here` says whether the owner takes the option that carries it. */
const HOW_TO_GIVE: Partial<Record<OptionOwner, (name: string, here: (option: string) => boolean) => string>> = {
  'createSessionPolicy()': (name, here) =>
    here('sessions')
      ? `give sessions: createSessionPolicy({ ${name} }) here, the same policy as everywhere else`
      : `give createSessionPolicy({ ${name} }) as sessions to ndIdRouter(), requireSignIn() and the other guards`,
  'new NdIdStrategy()': (name) => `give it to new NdIdStrategy({ ${name} })`,
  'new IdClient()': (name) => `give it to new IdClient({ ${name} }), or to new NdIdStrategy(), which builds the client`,
  'ndIdRouter()': (name) => `give it to ndIdRouter({ ${name} })`,
  'createCookieSession()': (name, here) =>
    here('session')
      ? `give session: createCookieSession({ ${name} }) here`
      : `give it to createCookieSession({ ${name} })`,
};

/** Levenshtein distance of `a` and `b`, case-insensitive, giving up (Infinity) beyond `limit`. */
function distance(a: string, b: string, limit: number): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > limit) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= y.length; j += 1) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      current.push(value);
      if (value < best) best = value;
    }
    if (best > limit) return Number.POSITIVE_INFINITY;
    previous = current;
  }
  return previous[y.length] as number;
}

/** The name of `names` nearest to `name` (edit distance, at most about a third of its length), or undefined. */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.ceil(name.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of names) {
    const d = distance(name, candidate, limit);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** ` (did you mean "<nearest of names>"?)`, or nothing when no name is near. */
export function didYouMean(name: string, names: readonly string[]): string {
  const near = nearestName(name, names);
  return near === undefined ? '' : ` (did you mean "${near}"?)`;
}

/** The owners, other than `owner`, that take an option named `name`. */
function homesOf(name: string, owner: OptionOwner): OptionOwner[] {
  return (Object.keys(OPTIONS_OF) as OptionOwner[]).filter(
    (other) => other !== owner && (OPTIONS_OF[other] as readonly string[]).includes(name),
  );
}

/** The sentence about one unknown option `name` given to `owner`. */
export function unknownOptionMessage(owner: OptionOwner, name: string): string {
  const who = owner.replace(/^new /, '').replace(/\(\)$/, '');
  const own = OPTIONS_OF[owner] as readonly string[];
  const shown = /^[\w$.-]{1,64}$/.test(name) ? name : 'an option whose name is not an identifier';
  const parts = [`${who}: unknown option "${shown}".`];
  const homes = homesOf(name, owner);
  const home = homes[0];
  if (home !== undefined) {
    const how = HOW_TO_GIVE[home]?.(name, (option) => own.includes(option));
    parts.push(`${name} is an option of ${home}, not of ${owner}${how === undefined ? '.' : `: ${how}.`}`);
  }
  const near = nearestName(name, own);
  if (near !== undefined) parts.push(`The nearest option of ${owner} is "${near}".`);
  else if (home === undefined) {
    const elsewhere = nearestName(name, [...new Set(Object.values(OPTIONS_OF).flat())]);
    const where = elsewhere === undefined ? undefined : homesOf(elsewhere, owner)[0];
    if (elsewhere !== undefined && where !== undefined)
      parts.push(`Did you mean "${elsewhere}", an option of ${where}?`);
    parts.push(`The options of ${owner} are: ${own.join(', ')}.`);
  }
  return parts.join(' ');
}

/**
 * A copy of `options` holding only its own enumerable properties, on a null prototype, so that an
 * option is read from what the caller gave and never from a polluted `Object.prototype` (an
 * `allowInsecureHttp`, `idleTimeout` or `secure` planted there by another bug). Anything that is
 * not an object passes unchanged, for the caller's own check to name.
 */
export function ownOptions<T>(options: T): T {
  if (typeof options !== 'object' || options === null) return options;
  return Object.assign(Object.create(null) as object, options) as T;
}

/**
 * Refuses an option `owner` does not take, naming the nearest valid name and where the setting
 * lives. Own enumerable names only; `undefined` or a non-object passes.
 * @throws TypeError for the first unknown option.
 */
export function checkOptionNames(options: unknown, owner: OptionOwner): void {
  if (typeof options !== 'object' || options === null) return;
  const own = OPTIONS_OF[owner] as readonly string[];
  for (const name of Object.keys(options)) {
    if (!own.includes(name)) throw new TypeError(unknownOptionMessage(owner, name));
  }
}
