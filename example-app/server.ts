/**
 * Starting the example app: against a real identity service ({@link startExampleServer}), or
 * with the bundled provider on a loopback port ({@link startEmbeddedExample}, what `npm start`
 * does by default).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startProvider } from 'passport-nd-id/provider';
import { createExampleApp, type ExampleApp, type ExampleAppConfig } from './app.js';
import { DEFAULT_SCOPE } from './config.js';

/** A running example app. */
export interface RunningExample {
  /** Where to open the site, e.g. `http://localhost:3000`. */
  url: string;
  /** The TCP port the site listens on. */
  port: number;
  /** The app and its session store. */
  example: ExampleApp;
  /** Stop serving and release everything. */
  close(): Promise<void>;
}

/** A running example app with its embedded provider. */
export interface RunningEmbeddedExample extends RunningExample {
  /** The embedded provider's origin. */
  providerUrl: string;
}

/** Client id under which the embedded mode registers the app. */
export const EMBEDDED_CLIENT_ID = 'example-app';

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Longest wait for the session store at start-up before serving anyway (pages answer 503 until it is up). */
export const STORE_STARTUP_WAIT_MS = 3000;

/** Wait for the session store, but not forever: an app whose Redis is down still starts and answers 503. */
async function readyOrServing(example: ExampleApp): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, STORE_STARTUP_WAIT_MS);
  });
  await Promise.race([example.ready, waited]);
  clearTimeout(timer);
}

/** Serve an already configured example app on `host:port`. */
export async function startExampleServer(
  config: ExampleAppConfig,
  listenOn: { port: number; host: string },
): Promise<RunningExample> {
  const example = createExampleApp(config);
  const server = createServer(example.app);
  let port: number;
  try {
    port = await listen(server, listenOn.port, listenOn.host);
  } catch (err) {
    await example.close();
    throw err;
  }
  await readyOrServing(example);
  return {
    url: new URL(config.provider.redirectUri).origin,
    port,
    example,
    close: async () => {
      await closeServer(server);
      await example.close();
    },
  };
}

/** What the embedded mode keeps between runs, in its data folder. */
interface EmbeddedState {
  privateKey: string;
  publicKey: string;
  clientSecret: string;
  sessionSecret: string;
  subjectSecret: string;
}

/**
 * Read the embedded mode's key pair and secrets from `dataDir`, creating them on first run.
 * Files are written readable by the owner only.
 */
export function loadOrCreateEmbeddedState(dataDir: string): EmbeddedState {
  const keyFile = join(dataDir, 'rp-private-key.pem');
  const publicFile = join(dataDir, 'rp-public-key.pem');
  const secretsFile = join(dataDir, 'secrets.json');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(keyFile) || !existsSync(publicFile)) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
    writeFileSync(publicFile, publicKey.export({ format: 'pem', type: 'spki' }), { mode: 0o644 });
  }
  if (!existsSync(secretsFile)) {
    const secret = (): string => randomBytes(32).toString('base64url');
    writeFileSync(
      secretsFile,
      `${JSON.stringify({ clientSecret: secret(), sessionSecret: secret() + secret(), subjectSecret: secret() }, null, 2)}\n`,
      { mode: 0o600 },
    );
  }
  chmodSync(keyFile, 0o600);
  chmodSync(secretsFile, 0o600);
  const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Omit<EmbeddedState, 'privateKey' | 'publicKey'>;
  return {
    privateKey: readFileSync(keyFile, 'utf8'),
    publicKey: readFileSync(publicFile, 'utf8'),
    clientSecret: secrets.clientSecret,
    sessionSecret: secrets.sessionSecret,
    subjectSecret: secrets.subjectSecret,
  };
}

/** Options of {@link startEmbeddedExample}. */
export interface EmbeddedOptions {
  /** Port of the site (0: any free port). */
  port: number;
  /** Interface of the site. Default `127.0.0.1`. */
  host?: string;
  /** Folder for the generated key pair and secrets. */
  dataDir: string;
  /** Scopes requested. Default: name, identity number and passport expiry. */
  scope?: string;
  /** Provider mode: `false` (default) shows the QR page; `true` or a persona id approves at once. */
  autoApprove?: boolean | string;
  /** Port of the built-in provider on 127.0.0.1. Default 0: any free port. */
  providerPort?: number;
  /** Session store; absent: in memory. */
  redisUrl?: string;
  /** Operational log lines. */
  log?: (line: string) => void;
  /** As {@link ExampleAppConfig.loginTtlMs}. */
  loginTtlMs?: number;
  /** As {@link ExampleAppConfig.sessionMaxAgeMs}. */
  sessionMaxAgeMs?: number;
  /** As {@link ExampleAppConfig.memoryStore}. */
  memoryStore?: ExampleAppConfig['memoryStore'];
}

/**
 * Start the bundled provider on a loopback port (`providerPort`, or a free one), register the app with it (generating its
 * key pair on first run) and serve the site on `http://localhost:<port>`.
 */
export async function startEmbeddedExample(options: EmbeddedOptions): Promise<RunningEmbeddedExample> {
  const state = loadOrCreateEmbeddedState(options.dataDir);
  // Listen first, so the callback URL registered with the provider carries the real port.
  const server = createServer();
  const port = await listen(server, options.port, options.host ?? '127.0.0.1');
  const url = `http://localhost:${port}`;
  const redirectUri = `${url}/auth/callback`;
  let provider: Awaited<ReturnType<typeof startProvider>>;
  try {
    provider = await startProvider({
      clients: [
        {
          clientId: EMBEDDED_CLIENT_ID,
          clientSecret: state.clientSecret,
          redirectUris: [redirectUri],
          publicKey: state.publicKey,
          name: 'Example relying party',
        },
      ],
      autoApprove: options.autoApprove ?? false,
      subjectSecret: state.subjectSecret,
      host: '127.0.0.1',
      port: options.providerPort ?? 0,
    });
  } catch (err) {
    await closeServer(server);
    throw err;
  }
  const example = createExampleApp({
    provider: {
      hostname: provider.baseUrl,
      clientId: EMBEDDED_CLIENT_ID,
      clientSecret: state.clientSecret,
      privateKey: state.privateKey,
      redirectUri,
      scope: options.scope ?? DEFAULT_SCOPE,
    },
    sessionSecrets: [state.sessionSecret],
    redisUrl: options.redisUrl,
    ...(options.log ? { log: options.log } : {}),
    loginTtlMs: options.loginTtlMs,
    sessionMaxAgeMs: options.sessionMaxAgeMs,
    memoryStore: options.memoryStore,
  });
  server.on('request', example.app);
  await readyOrServing(example);
  return {
    url,
    port,
    providerUrl: provider.baseUrl,
    example,
    close: async () => {
      await closeServer(server);
      await example.close();
      await provider.close();
    },
  };
}
