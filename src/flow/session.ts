/**
 * The session as the login flow needs it: get, set and delete of one key, and optionally a way
 * to start a fresh session. Any framework's session can satisfy it; {@link recordSession} wraps
 * a plain object such as express-session's `req.session`.
 *
 * The flow never changes a value it read in place: every change goes back through `set` or
 * `delete`, so sessions held in a cookie (which persist only on `set`) see each change.
 */

/** The tiny session interface the login flow works with. */
export interface FlowSession {
  /** The value stored under `key`, or `undefined`. */
  get(key: string): unknown;
  /** Stores `value` (a JSON-friendly plain object) under `key`. */
  set(key: string, value: unknown): void;
  /** Removes `key`. */
  delete(key: string): void;
  /**
   * Optional: replace the session with a fresh one (new id, no data), as done at sign-in
   * against session fixation. When present, `complete` calls it after a successful login and
   * carries the other tabs' pending logins over.
   */
  regenerate?(): Promise<void>;
}

/**
 * A {@link FlowSession} over a plain record: express-session's `req.session`, a Koa or Hono
 * session object, or `{}` in a test. Keys are own properties; nothing is read from the prototype.
 */
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
