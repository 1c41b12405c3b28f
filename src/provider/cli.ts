#!/usr/bin/env node
/**
 * `nd-id-provider`: the provider from a shell (options in `cli-help.ts`), or `init` to write a
 * client key pair and a clients.json. The subject secret comes from ND_ID_SUBJECT_SECRET, never
 * argv (argv is visible to other users). A run ends on SIGINT/SIGTERM/SIGHUP (also when the npx or
 * shell that started it ends), on
 * `POST /_provider/conformance/finish` or by `--exit-after`, printing the audit, the conformance
 * results and a verdict, and exiting with its status.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { readClientsFile } from './cli-clients-file.js';
import { readTtlFlag, rehearsalOptions, TTL_FLAGS, type RehearsalFlags } from './cli-options.js';
import { resolveConfig } from './config.js';
import { checkPersonas } from './config-checks.js';
import { startProvider, type StartedProvider, type StartProviderOptions } from './index.js';
import { DEFAULT_PERSONAS } from './personas.js';
import { INIT_FILES, runInit } from './cli-init.js';
import { endOnSignals, endWithParent } from './cli-process.js';
import { DEFAULT_PORT, HELP } from './cli-help.js';
import { packageVersion } from './cli-version.js';
import { verdictOf } from './testing/verdict.js';
import type { Persona } from './types.js';
import { withoutTrailingSlashes } from './trailing-slashes.js';

export { DEFAULT_PORT };

/** Where the CLI writes, and what it reads from its environment. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
}

/**
 * What {@link runCli} ends with: an exit code, or a running provider with `stop()` (prints the
 * tables and verdict, resolves to the exit status) and `ended` (that status, however the run ends).
 */
export type CliOutcome =
  | { exitCode: number }
  | { started: StartedProvider; stop(): Promise<number>; ended: Promise<number> };

interface ParsedArgs {
  port: number;
  host: string;
  baseUrl?: string;
  clientsFile?: string;
  personasFile?: string;
  autoApprove?: boolean | string;
  controlTokenFile?: string;
  /** The variant, lifetime and signing-key flags (`cli-options.ts`). */
  rehearsal: RehearsalFlags;
  log: boolean;
  faultControl: boolean;
  auditEndpoint: boolean;
  auditStrict: boolean;
  conformance: boolean;
  listPersonas: boolean;
  help: boolean;
  version: boolean;
  strictClientAuth: boolean;
  dpopNonce: boolean;
  noIss: boolean;
  noUserinfo: boolean;
  /** Seconds, or `plan`. */
  exitAfter?: number | 'plan';
}

type BooleanField =
  | 'help'
  | 'version'
  | 'dpopNonce'
  | 'strictClientAuth'
  | 'listPersonas'
  | 'log'
  | 'faultControl'
  | 'auditEndpoint'
  | 'auditStrict'
  | 'conformance'
  | 'noIss'
  | 'noUserinfo';

/** The options that are on when given (`--log`), by name. */
const FLAGS: Readonly<Record<string, BooleanField>> = {
  help: 'help',
  version: 'version',
  'dpop-nonce': 'dpopNonce',
  'strict-client-auth': 'strictClientAuth',
  'list-personas': 'listPersonas',
  log: 'log',
  'fault-control': 'faultControl',
  'audit-endpoint': 'auditEndpoint',
  'audit-strict': 'auditStrict',
  conformance: 'conformance',
  'no-iss': 'noIss',
  'no-userinfo': 'noUserinfo',
};

/** The options that take a value (`--port 4000` or `--port=4000`): each stores it, or notes the mistake. */
const VALUES: Readonly<Record<string, (value: string, out: ParsedArgs, mistakes: string[]) => void>> = {
  port: (v, out, mistakes) => {
    if (!/^[0-9]+$/.test(v) || Number(v) > 65535)
      mistakes.push(`--port must be a whole number from 0 to 65535; got "${v}"`);
    else out.port = Number(v);
  },
  host: (v, out) => {
    out.host = v;
  },
  'base-url': (v, out) => {
    out.baseUrl = withoutTrailingSlashes(v);
  },
  clients: (v, out) => {
    out.clientsFile = v;
  },
  personas: (v, out) => {
    out.personasFile = v;
  },
  'control-token-file': (v, out) => {
    out.controlTokenFile = v;
  },
  'signing-key': (v, out) => {
    out.rehearsal.signingKeyFile = v;
  },
  'signing-keys': (v, out) => {
    out.rehearsal.signingKeysFile = v;
  },
  'issuer-path': (v, out) => {
    out.rehearsal.issuerPath = v;
  },
  ...Object.fromEntries(
    Object.keys(TTL_FLAGS).map((name) => [
      name,
      (v: string, out: ParsedArgs, mistakes: string[]) => readTtlFlag(name, v, out.rehearsal, mistakes),
    ]),
  ),
  'exit-after': (v, out, mistakes) => {
    if (v === 'plan') out.exitAfter = 'plan';
    else if (/^[0-9]{1,7}s?$/.test(v) && Number.parseInt(v, 10) > 0) out.exitAfter = Number.parseInt(v, 10);
    else mistakes.push(`--exit-after takes a number of seconds (for example 300) or "plan"; got "${v.slice(0, 64)}"`);
  },
};

/**
 * Reads the command line with parseArgs, every option declared a flag so a value never swallows the
 * next option (`--port --log` is a missing port). Mistakes are collected, to report all at once.
 */
function readArgs(argv: readonly string[], mistakes: string[]): ParsedArgs {
  const out: ParsedArgs = {
    port: DEFAULT_PORT,
    host: '127.0.0.1',
    log: false,
    faultControl: false,
    auditEndpoint: false,
    auditStrict: false,
    conformance: false,
    listPersonas: false,
    help: false,
    version: false,
    strictClientAuth: false,
    dpopNonce: false,
    noIss: false,
    noUserinfo: false,
    rehearsal: { noIss: false, noUserinfo: false, ttl: {} }, // the two flags are copied in at use
  };
  const names = [...Object.keys(FLAGS), ...Object.keys(VALUES), 'auto-approve'];
  const options: Record<string, { type: 'boolean'; short?: string }> = Object.fromEntries(
    names.map((name) => [name, { type: 'boolean' }]),
  );
  options.help = { type: 'boolean', short: 'h' };
  options.version = { type: 'boolean', short: 'v' };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    const raw = argv[token.index]!;
    if (token.kind !== 'option' || !names.includes(token.name)) {
      mistakes.push(`unknown argument "${raw.slice(0, 64)}" (see --help)`);
      continue;
    }
    const flag = FLAGS[token.name];
    if (flag !== undefined) {
      out[flag] = true;
      continue;
    }
    const next = tokens[t + 1];
    const following = next?.kind === 'positional' && !next.value.startsWith('--') ? next.value : undefined;
    if (token.name === 'auto-approve') {
      out.autoApprove = token.inlineValue ? (token.value ?? '') : (following ?? true);
      if (!token.inlineValue && following !== undefined) t++;
      continue;
    }
    const value = token.inlineValue ? token.value : following;
    if (value === undefined) {
      mistakes.push(`--${token.name} needs a value`);
      continue;
    }
    if (!token.inlineValue) t++;
    VALUES[token.name]!(value, out, mistakes);
  }
  return out;
}

function personaTable(personas: readonly Persona[]): string {
  const rows = personas.map((p) => [
    p.id,
    p['profile.name'],
    p['profile.nric_number'],
    p['profile.passport_expiry_date'],
  ]);
  const all = [['ID', 'NAME', 'NRIC', 'PASSPORT EXPIRY'], ...rows];
  const widths = all[0]!.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return (
    all
      .map((r) =>
        r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

function mistakeLines(err: unknown): string[] {
  const message = err instanceof Error ? err.message : 'the configuration is not valid';
  const lines = message
    .split('\n')
    .filter((l) => l.startsWith('  - '))
    .map((l) => l.slice(4));
  return lines.length > 0 ? lines : [message];
}

function reportMistakes(io: CliIo, mistakes: string[], lead = 'nd-id-provider: cannot start'): CliOutcome {
  io.stderr(`${lead}, ${mistakes.length} mistake${mistakes.length === 1 ? '' : 's'}:\n`);
  for (const m of mistakes) io.stderr(`  - ${m}\n`);
  return { exitCode: 2 };
}

/** Run the command with `argv` (without node and the script path). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<CliOutcome> {
  if (argv[0] === 'init') return runInitCommand(argv.slice(1), io);
  const mistakes: string[] = [];
  const args = readArgs(argv, mistakes);
  if (args.help) {
    io.stdout(HELP);
    return { exitCode: 0 };
  }
  if (args.version) {
    io.stdout(`nd-id-provider ${packageVersion()}\n`);
    return { exitCode: 0 };
  }
  if (args.exitAfter === 'plan' && !args.conformance)
    mistakes.push('--exit-after plan needs --conformance (there is no plan to wait for)');
  const fromFile = args.clientsFile !== undefined ? readClientsFile(args.clientsFile, mistakes) : { options: {} };
  if (args.personasFile !== undefined) {
    if (fromFile.personas !== undefined)
      mistakes.push('--personas and a "personas" list in the clients file: give the people once');
    else {
      const checked = checkPersonas(resolve(args.personasFile), mistakes);
      if (checked.length > 0) fromFile.personas = [...checked];
    }
  }
  if (args.listPersonas && mistakes.length === 0) {
    io.stdout(personaTable(fromFile.personas ?? DEFAULT_PERSONAS));
    return { exitCode: 0 };
  }
  if (args.clientsFile === undefined)
    mistakes.push('--clients FILE is required: a JSON file of the registered clients (see --help)');

  const subjectSecret = io.env['ND_ID_SUBJECT_SECRET'];
  let controlToken = io.env['ND_ID_CONTROL_TOKEN'] || undefined;
  if (args.controlTokenFile !== undefined) {
    try {
      controlToken = readFileSync(resolve(args.controlTokenFile), 'utf8').trim();
    } catch {
      mistakes.push(`--control-token-file ${args.controlTokenFile} cannot be read`);
    }
  }
  const options: StartProviderOptions = {
    clients: fromFile.clients ?? [],
    port: args.port,
    host: args.host,
    ...(fromFile.personas !== undefined ? { personas: fromFile.personas } : {}),
    ...(args.baseUrl !== undefined ? { baseUrl: args.baseUrl } : {}),
    ...(args.autoApprove !== undefined ? { autoApprove: args.autoApprove } : {}),
    ...rehearsalOptions(
      { ...args.rehearsal, noIss: args.noIss, noUserinfo: args.noUserinfo },
      fromFile.options,
      io.env,
      mistakes,
    ),
    ...(subjectSecret !== undefined && subjectSecret !== '' ? { subjectSecret } : {}),
    log: (line: string) => {
      if (args.log || ALWAYS_LOGGED.test(line)) io.stderr(`nd-id-provider: ${line}\n`);
    },
    ...(args.strictClientAuth ? { strictClientAuth: true } : {}),
    ...(args.dpopNonce ? { dpopNonce: true } : {}),
    ...(args.auditStrict ? { auditStrict: true } : {}),
    ...(args.faultControl ? { faultControl: true } : {}),
    ...(args.auditEndpoint ? { auditEndpoint: true } : {}),
    ...(args.conformance ? { conformance: true } : {}),
    ...(controlToken !== undefined ? { controlToken } : {}),
  };
  // Validate the whole configuration before listening, so every mistake is reported in one go.
  if (fromFile.clients !== undefined) {
    const { port: _port, host: _host, ...config } = options;
    try {
      resolveConfig({
        ...config,
        baseUrl: args.baseUrl ?? `http://${args.host.includes(':') ? `[${args.host}]` : args.host}:${args.port || 1}`,
      });
    } catch (err) {
      mistakes.push(...mistakeLines(err));
    }
  }
  if (mistakes.length > 0) return reportMistakes(io, mistakes);

  let started: StartedProvider;
  try {
    started = await startProvider(options);
  } catch (err) {
    if (err instanceof TypeError) return reportMistakes(io, mistakeLines(err));
    const code = (err as { code?: unknown }).code;
    return reportMistakes(io, [
      code === 'EADDRINUSE'
        ? `port ${args.port} on ${args.host} is already in use (try --port 0)`
        : `cannot listen on ${args.host}:${args.port} (${typeof code === 'string' ? code : 'error'})`,
    ]);
  }
  if (subjectSecret === undefined || subjectSecret === '') {
    io.stderr('nd-id-provider: ND_ID_SUBJECT_SECRET is not set; "sub" values will change on restart.\n');
  }
  if (args.faultControl) {
    io.stderr(
      'nd-id-provider: fault control is on (POST/GET/DELETE /_provider/faults); anyone who can reach this port can make it fail.\n',
    );
  }
  io.stdout(`nd-id-provider ready at ${started.baseUrl} (issuer ${started.provider.issuer})\n`);
  return endable(started, args, io);
}

/** Lines of the provider's log shown without --log: refusals, audit findings and server failures. */
const ALWAYS_LOGGED = /^[a-z]+: (?:refused|answer refused|finding|server failure)\b/;

/** The running outcome: `stop()` once, whatever ends the run first. */
function endable(started: StartedProvider, args: ParsedArgs, io: CliIo): CliOutcome {
  let ending: Promise<number> | undefined;
  let settle: (code: number) => void = () => undefined;
  const ended = new Promise<number>((resolve) => {
    settle = resolve;
  });
  const timers: NodeJS.Timeout[] = [];
  const stop = (): Promise<number> => {
    ending ??= (async () => {
      for (const t of timers) clearInterval(t);
      const findings = started.provider.audit();
      const plan = args.conformance ? started.provider.conformance.finish() : undefined;
      await started.close();
      const verdict = verdictOf(findings, plan, args.auditStrict);
      io.stdout(verdict.text);
      settle(verdict.exitCode);
      return verdict.exitCode;
    })();
    return ending;
  };
  const end = (why: string): void => {
    io.stderr(`nd-id-provider: ${why}; ending the run\n`);
    void stop();
  };
  if (args.conformance)
    started.provider.conformance.onFinishRequest(() => end('POST /_provider/conformance/finish answered'));
  if (typeof args.exitAfter === 'number') {
    const seconds = args.exitAfter;
    timers.push(setTimeout(() => end(`--exit-after: ${seconds} s passed`), seconds * 1000));
  } else if (args.exitAfter === 'plan') {
    timers.push(
      setInterval(() => {
        const r = started.provider.conformance.results();
        const last = r.cases[r.cases.length - 1];
        if (!r.running || last?.status === 'pass' || last?.status === 'fail')
          end('--exit-after plan: the last case is decided');
      }, 200),
    );
  }
  return { started, stop, ended };
}

/** `nd-id-provider init ...`. */
function runInitCommand(argv: readonly string[], io: CliIo): CliOutcome {
  const mistakes: string[] = [];
  let redirectUri: string | undefined;
  let dir: string | undefined;
  let clientId: string | undefined;
  let force = false;
  let profile: 'fapi2' | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const take = (): string | undefined => {
      if (eq !== -1) return arg.slice(eq + 1);
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) {
        mistakes.push(`${flag} needs a value`);
        return undefined;
      }
      i += 1;
      return v;
    };
    if (flag === '--redirect-uri') redirectUri = take();
    else if (flag === '--dir') dir = take();
    else if (flag === '--client-id') clientId = take();
    else if (flag === '--force') force = true;
    else if (flag === '--profile') {
      const value = take();
      if (value === 'fapi2') profile = value;
      else if (value !== undefined) mistakes.push('--profile must be fapi2 (or left out for the spec as written)');
    } else if (flag === '--help' || flag === '-h') {
      io.stdout(HELP);
      return { exitCode: 0 };
    } else mistakes.push(`unknown argument "${arg.slice(0, 64)}" for init (see --help)`);
  }
  if (redirectUri === undefined && !mistakes.some((m) => m.startsWith('--redirect-uri'))) {
    mistakes.push(
      '--redirect-uri URL is required: the callback URL of your app, e.g. http://localhost:3000/auth/callback',
    );
  }
  if (mistakes.length > 0 || redirectUri === undefined)
    return reportMistakes(io, mistakes, 'nd-id-provider init: nothing written');
  const outcome = runInit({
    redirectUri,
    force,
    ...(dir !== undefined ? { dir } : {}),
    ...(clientId !== undefined ? { clientId } : {}),
    ...(profile ? { profile } : {}),
  });
  if (!outcome.ok) return reportMistakes(io, outcome.mistakes, 'nd-id-provider init: nothing written');
  io.stdout(
    `Wrote:\n${outcome.files.map((f) => `  ${f}\n`).join('')}` +
      `Client id: ${outcome.clientId} (${profile ? `FAPI 2.0: its private keys are in ${INIT_FILES.fapiKeys}` : `its secret is in ${INIT_FILES.clients}`}; keep the private keys and clients.json out of version control)\n` +
      (outcome.backchannelLogoutUri === undefined
        ? ''
        : `Back-channel logout URI (backchannel_logout_uri, served by ndIdRouter({ backchannelLogout })): ${outcome.backchannelLogoutUri}\n`) +
      `Next: nd-id-provider --clients ${dir !== undefined ? `${withoutTrailingSlashes(dir)}/` : ''}${INIT_FILES.clients} --auto-approve\n`,
  );
  return { exitCode: 0 };
}

/* c8 ignore start */
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  const startedBy = process.ppid;
  const endOnSignal = endOnSignals();
  const io: CliIo = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
  };
  runCli(process.argv.slice(2), io).then(
    (outcome) => {
      if ('exitCode' in outcome) {
        process.exitCode = outcome.exitCode;
        return;
      }
      outcome.ended.then(
        (code) => process.exit(code),
        () => process.exit(1),
      );
      endOnSignal(outcome);
      endWithParent(startedBy, outcome);
    },
    () => {
      process.stderr.write('nd-id-provider: failed to start\n');
      process.exitCode = 1;
    },
  );
}
/* c8 ignore stop */
