/**
 * The `--clients` file of `nd-id-provider`: the registered clients (an array, or `{ "clients" }`),
 * and beside them the people and the provider options a rehearsal needs to keep with its clients
 * (`issuerPath`, `authorizationResponseIss`, `userinfo`, `ttl`, the signing keys). Paths in it
 * (`publicKeyFile`, `signingKeysFile`) are read relative to the file.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Persona, ProviderClient, ProviderOptions } from './types.js';

/** The provider options a clients file may set, checked with the rest by the provider's configuration. */
export const FILE_OPTIONS = ['issuerPath', 'authorizationResponseIss', 'userinfo', 'ttl', 'signingKeys'] as const;

/** What a clients file holds. */
export interface ClientsFile {
  clients?: ProviderClient[];
  personas?: Persona[];
  /** The provider options it sets. */
  options: Partial<Pick<ProviderOptions, (typeof FILE_OPTIONS)[number]>>;
}

/** The file's JSON, or undefined with a mistake. */
function readJson(file: string, mistakes: string[]): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    mistakes.push(`--clients file "${file}" cannot be read`);
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    mistakes.push(`--clients file "${file}" is not valid JSON`);
    return undefined;
  }
}

/** A client with its `publicKeyFile` read into `publicKey`. */
function withPublicKey(raw: unknown, i: number, dir: string, mistakes: string[]): unknown {
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
}

/** The provider options of the file's top level (`signingKeysFile` made a path beside the file). */
function optionsOf(
  rest: Record<string, unknown>,
  file: string,
  dir: string,
  mistakes: string[],
): ClientsFile['options'] {
  const options: Record<string, unknown> = {};
  const allowed = ['clients', 'personas', ...FILE_OPTIONS, 'signingKeysFile'];
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'signingKeysFile') {
      if ('signingKeys' in rest)
        mistakes.push(`--clients file "${file}" gives both signingKeys and signingKeysFile; keep one`);
      else if (typeof value !== 'string' || value === '')
        mistakes.push(`--clients file "${file}": signingKeysFile must be a path`);
      else options['signingKeys'] = { file: resolve(dir, value) };
    } else if ((FILE_OPTIONS as readonly string[]).includes(key)) options[key] = value;
    else mistakes.push(`--clients file "${file}" has an unknown key "${key}"; allowed: ${allowed.join(', ')}`);
  }
  return options as ClientsFile['options'];
}

/** Reads the `--clients` file, adding one mistake per problem. */
export function readClientsFile(file: string, mistakes: string[]): ClientsFile {
  const parsed = readJson(file, mistakes);
  if (parsed === undefined) return { options: {} };
  const root = Array.isArray(parsed) ? { clients: parsed } : parsed;
  if (typeof root !== 'object' || root === null || !Array.isArray((root as { clients?: unknown }).clients)) {
    mistakes.push(`--clients file "${file}" must hold an array of clients or { "clients": [...] }`);
    return { options: {} };
  }
  const { clients, personas, ...rest } = root as { clients: unknown[]; personas?: Persona[] };
  const dir = dirname(resolve(file));
  const resolved = clients.map((raw, i) => withPublicKey(raw, i, dir, mistakes));
  return {
    clients: resolved as ProviderClient[],
    ...(personas !== undefined ? { personas } : {}),
    options: optionsOf(rest, file, dir, mistakes),
  };
}
