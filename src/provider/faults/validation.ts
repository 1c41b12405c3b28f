/** Checks a fault and its options, from code or HTTP: one `TypeError` naming the mistake. */
import { isRecord } from '../../encoding.js';
import { APPLIES_TO, FAULT_ENDPOINTS, KINDS, type ActiveFault, type Fault, type FaultEndpoint } from './kinds.js';

/** The option names next to a fault. */
export const OPTION_KEYS = ['endpoint', 'times', 'forMs'] as const;
const MAX_LATENCY_MS = 600_000;
const MAX_TIMES = 1_000_000;
const MAX_FOR_MS = 86_400_000;

/** A fault as the controller keeps it. */
export interface FaultEntry {
  id: number;
  fault: Fault;
  endpoint: FaultEndpoint | 'all';
  remaining: number | undefined;
  expiresAt: number | undefined;
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

/** The fault itself, checked and copied; `extraAllowed` are other fields allowed beside it. */
export function checkFault(raw: Record<string, unknown>, extraAllowed: readonly string[]): Fault {
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

/** The options object itself: only known option names. */
export function checkOptionNames(options: unknown): Record<string, unknown> {
  if (!isRecord(options)) throw new TypeError('faults: options must be an object: { endpoint?, times?, forMs? }');
  for (const key of Object.keys(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`faults: unknown option "${key.slice(0, 40)}"; allowed: ${OPTION_KEYS.join(', ')}`);
    }
  }
  return options;
}

/** Where and how long, checked, for a given fault. */
export function checkOptions(
  fault: Fault,
  raw: Record<string, unknown>,
  now: number,
): Pick<FaultEntry, 'endpoint' | 'remaining' | 'expiresAt'> {
  const applies = APPLIES_TO[fault.kind];
  let endpoint: FaultEndpoint | 'all' = applies.length === 1 ? applies[0]! : 'all';
  const given = raw['endpoint'];
  if (given !== undefined) {
    if (given !== 'all' && !(FAULT_ENDPOINTS as readonly string[]).includes(given as string)) {
      throw new TypeError(`faults: endpoint must be one of ${FAULT_ENDPOINTS.join(', ')} or all; got ${shown(given)}`);
    }
    endpoint = given as FaultEndpoint | 'all';
    if (endpoint === 'all' ? applies.length === 1 : !applies.includes(endpoint)) {
      throw new TypeError(
        `faults: a ${fault.kind} fault applies only to ${applies.join(', ')}; got endpoint ${shown(given)}`,
      );
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

/** A copy of an entry, as listed. */
export function snapshot(entry: FaultEntry): ActiveFault {
  const out: ActiveFault = { id: entry.id, fault: { ...entry.fault }, endpoint: entry.endpoint };
  if (entry.remaining !== undefined) out.remaining = entry.remaining;
  if (entry.expiresAt !== undefined) out.expiresAt = entry.expiresAt;
  return out;
}
