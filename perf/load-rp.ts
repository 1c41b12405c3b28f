/**
 * The relying party of `npm run load`, run in its own process so the load generator's CPU does
 * not count against it: the example app (NdIdStrategy + ndIdRouter) with its in-memory session
 * store (BoundedMemoryStore). It is driven over IPC by perf/load.ts:
 *
 * - `{ type: 'start', provider }`: listen on a free loopback port, answer `{ type: 'ready', port }`;
 * - `{ type: 'stats' }`: run a full GC and answer with memory figures and session-store figures;
 * - `{ type: 'sessions' }`: answer with the signed-in user of every session, by session id, so
 *   the generator can check that each browser holds its own person (never printed).
 *
 * Started with `--expose-gc`; tsx resolves `passport-nd-id` to the sources through the `paths`
 * of tsconfig.json (no build needed).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type session from 'express-session';
import { createExampleApp } from '../example-app/app.js';
import type { ProviderSettings } from '../example-app/config.js';
import { BoundedMemoryStore } from '../example-app/memory-store.js';

/** Messages from the generator. */
export type RpRequest =
  | { type: 'start'; provider: Omit<ProviderSettings, 'redirectUri'>; sessionSecret: string }
  | { type: 'stats' }
  | { type: 'sessions' };

/** Memory and session-store figures. */
export interface RpStats {
  rss: number;
  heapUsed: number;
  sessions: number;
  /** Sessions that hold at least one pending login. */
  withPending: number;
  /** Most pending logins found in one session. */
  maxPendingPerSession: number;
  /** Sizes of the sessions as the store serializes them (JSON), in bytes. */
  totalBytes: number;
  maxBytes: number;
  /** Sessions whose cookie expires more than an hour from now (they will outlive a pending login's TTL). */
  longLived: number;
}

/** Messages to the generator. */
export type RpReply =
  | { type: 'ready'; port: number }
  | { type: 'stats'; stats: RpStats }
  | { type: 'sessions'; users: Record<string, { sub: string; data: Record<string, string> } | null> }
  | { type: 'failed'; reason: string };

type StoredSession = session.SessionData & {
  passport?: { user?: { sub: string; data: Record<string, string> } };
} & Record<string, unknown>;

const send = (reply: RpReply): void => {
  process.send?.(reply);
};

// The store the example app uses without Redis (default bound and sweep).
const store = new BoundedMemoryStore();

function allSessions(): Promise<Record<string, StoredSession>> {
  return new Promise((resolve, reject) => {
    store.all((err, all) => {
      if (err) reject(err instanceof Error ? err : new Error('the session store failed'));
      else resolve((all ?? {}) as Record<string, StoredSession>);
    });
  });
}

async function stats(): Promise<RpStats> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('start this process with --expose-gc');
  gc();
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  const all = await allSessions();
  let totalBytes = 0;
  let maxBytes = 0;
  let withPending = 0;
  let maxPendingPerSession = 0;
  let longLived = 0;
  const hourFromNow = Date.now() + 60 * 60 * 1000;
  for (const data of Object.values(all)) {
    const bytes = Buffer.byteLength(JSON.stringify(data));
    totalBytes += bytes;
    maxBytes = Math.max(maxBytes, bytes);
    // Pending logins live under 'nd-id:<client id>' (or a configured key starting with 'nd-id').
    const pending = Object.entries(data).find(([key]) => key === 'nd-id' || key.startsWith('nd-id:'))?.[1];
    const count = typeof pending === 'object' && pending !== null ? Object.keys(pending).length : 0;
    if (count > 0) withPending += 1;
    maxPendingPerSession = Math.max(maxPendingPerSession, count);
    const expires = data.cookie?.expires;
    if (expires !== undefined && expires !== null && new Date(expires).getTime() > hourFromNow) longLived += 1;
  }
  return {
    rss,
    heapUsed,
    sessions: Object.keys(all).length,
    withPending,
    maxPendingPerSession,
    totalBytes,
    maxBytes,
    longLived,
  };
}

async function start(request: Extract<RpRequest, { type: 'start' }>): Promise<void> {
  // Listen first, so the callback URL carries the real port.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const example = createExampleApp({
    provider: { ...request.provider, redirectUri: `http://127.0.0.1:${port}/auth/callback` },
    sessionSecrets: [request.sessionSecret],
    store,
    // Operational lines only (codes, never values); the generator counts failures itself.
    log: (line) => process.stderr.write(`rp: ${line}\n`),
  });
  server.on('request', example.app);
  await example.ready;
  send({ type: 'ready', port });
}

process.on('message', (message: RpRequest) => {
  const run = async (): Promise<void> => {
    if (message.type === 'start') return start(message);
    if (message.type === 'stats') return send({ type: 'stats', stats: await stats() });
    const all = await allSessions();
    const users: Record<string, { sub: string; data: Record<string, string> } | null> = {};
    for (const [sid, data] of Object.entries(all)) users[sid] = data.passport?.user ?? null;
    send({ type: 'sessions', users });
  };
  run().catch((err: unknown) =>
    send({ type: 'failed', reason: err instanceof Error ? err.message.slice(0, 200) : 'unknown error' }),
  );
});
process.on('disconnect', () => process.exit(0));
