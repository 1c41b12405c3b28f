#!/usr/bin/env node
/**
 * `nd-id-provider`: run the provider from a shell.
 *
 *   nd-id-provider --clients clients.json [--port 4000] [--host 127.0.0.1] [--auto-approve [PERSONA]] [--fault-control]
 *                  [--audit-endpoint] [--audit-strict] [--conformance]
 *
 * The clients file is JSON: an array of clients, or `{ "clients": [...], "personas": [...] }`.
 * A client may give `publicKeyFile` (relative to the clients file) instead of `publicKey`.
 * The pairwise-sub secret comes from the environment (ND_ID_SUBJECT_SECRET), never from argv.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkPersonas, resolveConfig } from './config.js';
import { startProvider, type StartedProvider, type StartProviderOptions } from './index.js';
import { DEFAULT_PERSONAS } from './personas.js';
import { formatAuditTable } from './testing/audit.js';
import { formatConformanceTable } from './testing/conformance.js';
import type { Persona, ProviderClient } from './types.js';

/** Port used when --port is not given. */
export const DEFAULT_PORT = 4000;

/** Where the CLI writes, and what it reads from its environment. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
}

/**
 * What {@link runCli} ends with: an exit code, or a running provider and how to stop it (which
 * prints the audit table and resolves to the exit code: 1 with `--audit-strict` and findings).
 */
export type CliOutcome = { exitCode: number } | { started: StartedProvider; stop(): Promise<number> };

const HELP = `Usage: nd-id-provider --clients FILE [options]

Runs a strict test instance of the national digital identity service: every endpoint,
a QR login page and a simulated mobile app. For development and CI only.

Options:
  --clients FILE            JSON file of registered clients (required to serve):
                            [{ "clientId", "clientSecret", "redirectUris": [...],
                               "publicKey" (PEM or JWK) | "publicKeyFile", "name"? }]
                            or { "clients": [...], "personas": [...] }
  --port N                  Port to listen on (default ${DEFAULT_PORT}; 0 = any free port)
  --host HOST               Interface to listen on (default 127.0.0.1)
  --base-url URL            Public origin, when it differs from http://HOST:PORT
  --auto-approve [PERSONA]  Skip the QR page: approve at once as PERSONA (default: the first)
  --signing-key FILE        RSA private key (PEM) to sign ID tokens (default: generated)
  --log                     Log requests and outcomes to stderr (never secrets or personal data)
  --fault-control           Serve POST/GET/DELETE /_provider/faults, to make the provider
                            misbehave on purpose from tests (latency, 500/503, resets, bad
                            bodies, bad ID tokens). Anyone who can reach the port can use it.
  --audit-endpoint          Serve GET /_provider/audit: what each client did wrong (reused or
                            missing state, nonce or PKCE challenge, codes redeemed twice, ...)
  --conformance             Run the offline conformance plan on the first client: each of its
                            next authorizations gets one hostile case (see the README). Results
                            at GET /_provider/conformance, reports at POST
                            /_provider/conformance/report; a table at exit, status 1 if a case failed
  --control-token-file FILE Require "Authorization: Bearer <token>" (the file's content, 16 to
                            512 characters) on the audit, conformance and fault controls;
                            without it anyone who can reach the port can read and plant audit
                            findings or inject faults. Or set ND_ID_CONTROL_TOKEN.
  --audit-strict            Exit with status 1 when the audit has findings (for CI). The audit
                            table is printed at exit in any case.
  --personas FILE           JSON file of the people to sign in as (an array of { "id",
                            "profile.name", "profile.nric_number", "profile.passport_expiry_date" })
  --list-personas           Print the people you can sign in as, then exit
  --help                    Print this help, then exit

Environment:
  ND_ID_SUBJECT_SECRET      Secret of the pairwise "sub" (at least 16 characters). Set it to
                            keep "sub" values stable across restarts.
  ND_ID_CONTROL_TOKEN       The control token (see --control-token-file).
`;

interface ParsedArgs {
  port: number;
  host: string;
  baseUrl?: string;
  clientsFile?: string;
  personasFile?: string;
  autoApprove?: boolean | string;
  signingKeyFile?: string;
  controlTokenFile?: string;
  log: boolean;
  faultControl: boolean;
  auditEndpoint: boolean;
  auditStrict: boolean;
  conformance: boolean;
  listPersonas: boolean;
  help: boolean;
}

function parseArgs(argv: readonly string[], mistakes: string[]): ParsedArgs {
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
  };
  const valueAfter = (i: number, flag: string): string | undefined => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) {
      mistakes.push(`${flag} needs a value`);
      return undefined;
    }
    return v;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const take = (): string | undefined => {
      if (inline !== undefined) return inline;
      const v = valueAfter(i, flag);
      if (v !== undefined) i += 1;
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--list-personas':
        out.listPersonas = true;
        break;
      case '--log':
        out.log = true;
        break;
      case '--fault-control':
        out.faultControl = true;
        break;
      case '--audit-endpoint':
        out.auditEndpoint = true;
        break;
      case '--audit-strict':
        out.auditStrict = true;
        break;
      case '--conformance':
        out.conformance = true;
        break;
      case '--port': {
        const v = take();
        if (v === undefined) break;
        const port = Number(v);
        if (!/^[0-9]+$/.test(v) || port > 65535) mistakes.push(`--port must be a whole number from 0 to 65535; got "${v}"`);
        else out.port = port;
        break;
      }
      case '--host': {
        const v = take();
        if (v !== undefined) out.host = v;
        break;
      }
      case '--base-url': {
        const v = take();
        if (v !== undefined) {
          // Trailing slashes dropped by a scan from the end (the expression /\/+$/ is quadratic on many slashes).
          let end = v.length;
          while (end > 0 && v[end - 1] === '/') end--;
          out.baseUrl = v.slice(0, end);
        }
        break;
      }
      case '--clients': {
        const v = take();
        if (v !== undefined) out.clientsFile = v;
        break;
      }
      case '--personas': {
        const v = take();
        if (v !== undefined) out.personasFile = v;
        break;
      }
      case '--control-token-file': {
        const v = take();
        if (v !== undefined) out.controlTokenFile = v;
        break;
      }
      case '--signing-key': {
        const v = take();
        if (v !== undefined) out.signingKeyFile = v;
        break;
      }
      case '--auto-approve': {
        if (inline !== undefined) out.autoApprove = inline;
        else {
          const next = argv[i + 1];
          if (next !== undefined && !next.startsWith('--')) {
            out.autoApprove = next;
            i += 1;
          } else out.autoApprove = true;
        }
        break;
      }
      default:
        mistakes.push(`unknown argument "${arg.slice(0, 64)}" (see --help)`);
    }
  }
  return out;
}

function readClientsFile(file: string, mistakes: string[]): { clients?: ProviderClient[]; personas?: Persona[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    mistakes.push(`--clients file "${file}" cannot be read`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    mistakes.push(`--clients file "${file}" is not valid JSON`);
    return {};
  }
  const root = Array.isArray(parsed) ? { clients: parsed } : parsed;
  if (typeof root !== 'object' || root === null || !Array.isArray((root as { clients?: unknown }).clients)) {
    mistakes.push(`--clients file "${file}" must hold an array of clients or { "clients": [...] }`);
    return {};
  }
  const { clients, personas, ...rest } = root as { clients: unknown[]; personas?: Persona[] };
  for (const key of Object.keys(rest)) mistakes.push(`--clients file "${file}" has an unknown key "${key}"; allowed: clients, personas`);
  const dir = dirname(resolve(file));
  const resolved = clients.map((raw, i) => {
    if (typeof raw !== 'object' || raw === null || !('publicKeyFile' in raw)) return raw;
    const { publicKeyFile, ...client } = raw as Record<string, unknown>;
    if ('publicKey' in client) {
      mistakes.push(`clients[${i}] gives both publicKey and publicKeyFile; keep one`);
      return client;
    }
    if (typeof publicKeyFile !== 'string') {
      mistakes.push(`clients[${i}].publicKeyFile must be a path`);
      return client;
    }
    try {
      return { ...client, publicKey: readFileSync(resolve(dir, publicKeyFile), 'utf8') };
    } catch {
      mistakes.push(`clients[${i}].publicKeyFile "${publicKeyFile}" cannot be read`);
      return client;
    }
  });
  return { clients: resolved as ProviderClient[], ...(personas !== undefined ? { personas } : {}) };
}

function personaTable(personas: readonly Persona[]): string {
  const rows = personas.map((p) => [p.id, p['profile.name'], p['profile.nric_number'], p['profile.passport_expiry_date']]);
  const all = [['ID', 'NAME', 'NRIC', 'PASSPORT EXPIRY'], ...rows];
  const widths = all[0]!.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n') + '\n';
}

function mistakeLines(err: unknown): string[] {
  const message = err instanceof Error ? err.message : 'the configuration is not valid';
  const lines = message.split('\n').filter((l) => l.startsWith('  - ')).map((l) => l.slice(4));
  return lines.length > 0 ? lines : [message];
}

function reportMistakes(io: CliIo, mistakes: string[]): CliOutcome {
  io.stderr(`nd-id-provider: cannot start, ${mistakes.length} mistake${mistakes.length === 1 ? '' : 's'}:\n`);
  for (const m of mistakes) io.stderr(`  - ${m}\n`);
  return { exitCode: 2 };
}

/** Run the command with `argv` (without node and the script path). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<CliOutcome> {
  const mistakes: string[] = [];
  const args = parseArgs(argv, mistakes);
  if (args.help) {
    io.stdout(HELP);
    return { exitCode: 0 };
  }
  const fromFile = args.clientsFile !== undefined ? readClientsFile(args.clientsFile, mistakes) : {};
  if (args.personasFile !== undefined) {
    if (fromFile.personas !== undefined) mistakes.push('--personas and a "personas" list in the clients file: give the people once');
    else {
      const checked = checkPersonas(resolve(args.personasFile), mistakes);
      if (checked.length > 0) fromFile.personas = [...checked];
    }
  }
  if (args.listPersonas && mistakes.length === 0) {
    io.stdout(personaTable(fromFile.personas ?? DEFAULT_PERSONAS));
    return { exitCode: 0 };
  }
  if (args.clientsFile === undefined) mistakes.push('--clients FILE is required: a JSON file of the registered clients (see --help)');

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
    ...(args.signingKeyFile !== undefined ? { signingKey: { file: args.signingKeyFile } } : {}),
    ...(subjectSecret !== undefined && subjectSecret !== '' ? { subjectSecret } : {}),
    ...(args.log ? { log: (line: string) => io.stderr(`nd-id-provider: ${line}\n`) } : {}),
    ...(args.faultControl ? { faultControl: true } : {}),
    ...(args.auditEndpoint ? { auditEndpoint: true } : {}),
    ...(args.conformance ? { conformance: true } : {}),
    ...(controlToken !== undefined ? { controlToken } : {}),
  };
  // Validate the whole configuration before listening, so every mistake is reported in one go.
  if (fromFile.clients !== undefined) {
    const { port: _port, host: _host, ...config } = options;
    try {
      resolveConfig({ ...config, baseUrl: args.baseUrl ?? `http://${args.host.includes(':') ? `[${args.host}]` : args.host}:${args.port || 1}` });
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
  const stop = async (): Promise<number> => {
    const findings = started.provider.audit();
    const plan = args.conformance ? started.provider.conformance.finish() : undefined;
    await started.close();
    io.stdout(formatAuditTable(findings));
    if (plan) io.stdout(formatConformanceTable(plan));
    return (args.auditStrict && findings.length > 0) || (plan !== undefined && plan.summary.fail > 0) ? 1 : 0;
  };
  return { started, stop };
}

/* c8 ignore start */
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
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
      const stop = (): void => {
        outcome.stop().then(
          (code) => process.exit(code),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    () => {
      process.stderr.write('nd-id-provider: failed to start\n');
      process.exitCode = 1;
    },
  );
}
/* c8 ignore stop */
