/**
 * The session as the login flow needs it. Every change goes through `set` or `delete`, never in
 * place, so sessions held in a cookie (persisted only on `set`) see it.
 */

/** The tiny session interface the login flow works with. */
export interface FlowSession {
  /** The value stored under `key`, or `undefined`. */
  get(key: string): unknown;
  /** Stores `value` (a JSON-friendly plain object) under `key`. */
  set(key: string, value: unknown): void;
  /** Removes `key`. */
  delete(key: string): void;
  /** Replaces the session with a fresh one (against session fixation); `complete` calls it after sign-in. */
  regenerate?(): Promise<void>;
}

/** A {@link FlowSession} over a plain record such as express-session's `req.session`; own keys only. */
export function recordSession(record: Record<string, unknown>): FlowSession {
  if (typeof record !== 'object' || record === null) {
    throw new TypeError('recordSession: record must be the session object, like req.session.');
  }
  return {
    get: (key) => (Object.hasOwn(record, key) ? record[key] : undefined),
    set: (key, value) => {
      record[key] = value;
    },
    delete: (key) => {
      delete record[key];
    },
  };
}

/** True when `value` has the three required methods of a {@link FlowSession}. */
export function isFlowSession(value: unknown): value is FlowSession {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<Record<keyof FlowSession, unknown>>;
  return (
    typeof v.get === 'function' &&
    typeof v.set === 'function' &&
    typeof v.delete === 'function' &&
    (v.regenerate === undefined || typeof v.regenerate === 'function')
  );
}
