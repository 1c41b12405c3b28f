/**
 * Traces and metrics of a login through `@opentelemetry/api`, an optional peer dependency: the
 * package's tracer and meter (`passport-nd-id`, its version) when the app has the API installed,
 * nothing at all when it has not (the API is looked up once, at the first span, and its absence
 * is kept). With the API installed and no SDK registered, a span is the API's non-recording
 * span and the step runs without entering a context.
 *
 * Only what describes the service and the outcome is ever an attribute: the provider's host, the
 * profile, an error code, an HTTP status. Never a value of the login (code, token, state, nonce,
 * `sub`, key, attribute).
 */
import { createRequire } from 'node:module';
import { IdError } from './errors.js';
import { PACKAGE_VERSION } from './version.js';

/** The tracer's and meter's name. */
export const INSTRUMENTATION_NAME = 'passport-nd-id';

/** The spans of a login, by step. */
export const SPAN = {
  loginStart: 'nd_id.login.start',
  loginCallback: 'nd_id.login.callback',
  par: 'nd_id.par',
  token: 'nd_id.token',
  idTokenDecrypt: 'nd_id.id_token.decrypt',
  idTokenValidate: 'nd_id.id_token.validate',
  userinfo: 'nd_id.userinfo',
  userinfoDecrypt: 'nd_id.userinfo.decrypt',
  discovery: 'nd_id.discovery',
  jwks: 'nd_id.jwks',
} as const;

export type SpanName = (typeof SPAN)[keyof typeof SPAN];

/** The metrics: logins by outcome, and the callback's duration in seconds. */
export const METRIC = { logins: 'nd_id.logins', loginDuration: 'nd_id.login.duration' } as const;

/** The `outcome` of a login that signed the person in (otherwise the IdError code). */
export const SIGNED_IN = 'signed_in';

/** `error.type` (and `outcome`) of a failure that is not an IdError. */
const OTHER_ERROR = '_OTHER';

export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

// The few parts of @opentelemetry/api used here, so that no declaration of this package names
// the optional peer (an app without it must still type-check).
interface OtelSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number }): unknown;
  isRecording(): boolean;
  end(): void;
}
interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
}
interface OtelTracer {
  startSpan(name: string, options: { attributes: TraceAttributes }): OtelSpan;
}
interface OtelMeter {
  createCounter(name: string, options: object): { add(value: number, attributes: TraceAttributes): void };
  createHistogram(name: string, options: object): { record(value: number, attributes: TraceAttributes): void };
}
interface OtelApi {
  trace: {
    getTracer(name: string, version: string): OtelTracer;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
  };
  context: { active(): OtelContext; with<T>(context: OtelContext, fn: () => T): T };
  metrics: { getMeterProvider(): { getMeter(name: string, version: string): OtelMeter } };
  createContextKey(description: string): symbol;
}

/** The API's `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2;

interface Loaded {
  api: OtelApi;
  tracer: OtelTracer;
  /** Marks our own span in a context, so an HTTP status is never written on an app's span. */
  ownSpan: symbol;
}

/** undefined: not looked up yet; null: not installed (or unusable). */
let loaded: Loaded | null | undefined;

function load(): Loaded | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  try {
    const api = createRequire(__filename)('@opentelemetry/api') as Partial<OtelApi> | undefined;
    if (
      typeof api?.trace?.getTracer === 'function' &&
      typeof api.context?.with === 'function' &&
      typeof api.metrics?.getMeterProvider === 'function' &&
      typeof api.createContextKey === 'function'
    ) {
      const full = api as OtelApi;
      loaded = {
        api: full,
        tracer: full.trace.getTracer(INSTRUMENTATION_NAME, PACKAGE_VERSION),
        ownSpan: full.createContextKey('passport-nd-id span'),
      };
    }
  } catch {
    // Not installed, or a runtime without require: no traces, no metrics.
  }
  return loaded;
}

/**
 * Runs `step` inside the span `name` (a child of the active span), and ends the span with the
 * step: a failure sets `error.type` (the IdError code) and the span's status to error.
 */
export function inSpan<T>(name: SpanName, attributes: TraceAttributes, step: () => Promise<T>): Promise<T> {
  const otel = loaded === undefined ? load() : loaded;
  if (otel === null) return step();
  const span = otel.tracer.startSpan(name, { attributes });
  if (!span.isRecording()) return step();
  const { api } = otel;
  const context = api.trace.setSpan(api.context.active(), span).setValue(otel.ownSpan, span);
  return api.context.with(context, () => settle(span, step));
}

async function settle<T>(span: OtelSpan, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    span.setAttribute('error.type', errorType(err));
    if (err instanceof IdError) {
      if (err.status !== undefined) span.setAttribute('http.response.status_code', err.status);
      if (err.reason !== undefined) span.setAttribute('nd_id.error.reason', err.reason);
    }
    span.setStatus({ code: STATUS_ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** The HTTP status of the provider's answer, on the step's span (when one of ours is active). */
export function recordHttpStatus(status: number): void {
  if (loaded === undefined || loaded === null) return;
  const span = loaded.api.context.active().getValue(loaded.ownSpan) as OtelSpan | undefined;
  span?.setAttribute('http.response.status_code', status);
}

/** The attributes every span of a client carries: the provider's host (and port) and the profile. */
export function serviceAttributes(serviceUrl: string | undefined, profile: string): TraceAttributes {
  const attributes: Record<string, string | number> = { 'nd_id.profile': profile };
  if (serviceUrl !== undefined) {
    try {
      const url = new URL(serviceUrl);
      attributes['server.address'] = url.hostname;
      if (url.port !== '') attributes['server.port'] = Number(url.port);
    } catch {
      // Not a URL: no address.
    }
  }
  return Object.freeze(attributes);
}

/**
 * The callback of a login as the span `nd_id.login.callback`, counted in `nd_id.logins` by
 * outcome, its duration in `nd_id.login.duration`.
 */
export function inLoginCallback<T>(attributes: TraceAttributes, step: () => Promise<T>): Promise<T> {
  const otel = loaded === undefined ? load() : loaded;
  if (otel === null) return step();
  return measured(otel.api, attributes, () => inSpan(SPAN.loginCallback, attributes, step));
}

async function measured<T>(api: OtelApi, attributes: TraceAttributes, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  let outcome: string = SIGNED_IN;
  try {
    return await step();
  } catch (err) {
    outcome = errorType(err);
    throw err;
  } finally {
    const { logins, duration } = instruments(api);
    const labels = { ...attributes, outcome };
    logins.add(1, labels);
    duration.record((performance.now() - started) / 1000, labels);
  }
}

interface Instruments {
  provider: unknown;
  logins: ReturnType<OtelMeter['createCounter']>;
  duration: ReturnType<OtelMeter['createHistogram']>;
}
let cachedInstruments: Instruments | undefined;

/** The counter and histogram of the meter provider registered now (an SDK may be registered after the first login). */
function instruments(api: OtelApi): Instruments {
  const provider = api.metrics.getMeterProvider();
  if (cachedInstruments?.provider === provider) return cachedInstruments;
  const meter = provider.getMeter(INSTRUMENTATION_NAME, PACKAGE_VERSION);
  cachedInstruments = {
    provider,
    logins: meter.createCounter(METRIC.logins, {
      description: "Completed logins (callbacks), by outcome: 'signed_in' or the error code.",
      unit: '{login}',
    }),
    duration: meter.createHistogram(METRIC.loginDuration, {
      description: 'Time the app spent completing a login (the callback), in seconds.',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
    }),
  };
  return cachedInstruments;
}

/** `error.type`: the IdError code, or `_OTHER` (an unexpected error's name or message could say anything). */
function errorType(err: unknown): string {
  return err instanceof IdError ? err.code : OTHER_ERROR;
}
