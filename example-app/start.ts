/**
 * `npm start`: run the example app.
 *
 * - With no `ND_ID_*` variable: the bundled provider runs on a loopback port in interactive QR
 *   mode (a free one; `ND_ID_PROVIDER_PORT` fixes it), and the site is served on
 *   http://localhost:3000 (`PORT` overrides).
 * - With `ND_ID_*` variables: the app signs people in with that service instead.
 *
 * A missing or invalid variable stops start-up with one sentence per mistake and exit code 2.
 */
import { ConfigError, loadConfig, type LoadedConfig } from './config.js';
import { DEFAULT_MAX_MEMORY_SESSIONS } from './memory-store.js';
import { startEmbeddedExample, startExampleServer, type RunningExample } from './server.js';

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

function describeListenError(err: unknown, port: number): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `Port ${port} is already in use; set PORT to a free port, e.g. PORT=3001 npm start`;
  if (code === 'EACCES') return `Port ${port} needs elevated rights; set PORT to a port above 1023`;
  return `The example app could not start: ${err instanceof Error ? err.message : String(err)}`;
}

/** The session settings shared by both modes. */
function sessionSettings(config: LoadedConfig) {
  const { loginTtlMs, sessionMaxAgeMs, maxMemorySessions } = config.site;
  return {
    ...(loginTtlMs !== undefined ? { loginTtlMs } : {}),
    ...(sessionMaxAgeMs !== undefined ? { sessionMaxAgeMs } : {}),
    ...(maxMemorySessions !== undefined ? { memoryStore: { maxSessions: maxMemorySessions } } : {}),
  };
}

async function run(config: LoadedConfig): Promise<RunningExample> {
  if (config.mode === 'embedded') {
    const running = await startEmbeddedExample({
      port: config.site.port,
      host: config.site.host,
      dataDir: config.dataDir,
      scope: config.scope,
      providerPort: config.providerPort,
      redisUrl: config.site.redisUrl,
      log,
      ...sessionSettings(config),
    });
    const sessions = config.site.redisUrl ? 'sessions in Redis' : 'sessions in memory';
    process.stdout.write(
      `Example app ready: open ${running.url} (signing in with the built-in test provider at ${running.providerUrl}; ${sessions})\n`,
    );
    return running;
  }
  if (!config.site.redisUrl) {
    log(
      `Warning: REDIS_URL is not set, so sessions are kept in memory: per-process (not shared between ` +
        `instances, lost on restart) and bounded (at most ${config.site.maxMemorySessions ?? DEFAULT_MAX_MEMORY_SESSIONS} ` +
        `sessions, MAX_MEMORY_SESSIONS; expired ones are removed every minute).`,
    );
  }
  const running = await startExampleServer(
    {
      provider: config.provider,
      sessionSecrets: config.site.sessionSecrets,
      redisUrl: config.site.redisUrl,
      trustProxy: config.site.trustProxy,
      log,
      ...sessionSettings(config),
    },
    { port: config.site.port, host: config.site.host },
  );
  process.stdout.write(
    `Example app ready: open ${running.url} (listening on ${config.site.host}:${running.port}; identity service ${config.provider.hostname})\n`,
  );
  return running;
}

async function main(): Promise<void> {
  let config: LoadedConfig;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let running: RunningExample;
  try {
    running = await run(config);
  } catch (err) {
    process.stderr.write(`${describeListenError(err, config.site.port)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
