/**
 * Checks at load that the runtime provides Node's built-in modules (workerd needs `nodejs_compat`),
 * so a worker fails at start with a sentence rather than later on an undefined function. Imported
 * first by the root and the client.
 */
import { nodeCryptoMissing } from '../jose/runtime.js';

/** What the client needs from the runtime and it lacks (empty when it has everything). */
export function missingNodeBuiltins(): string[] {
  const missing = missingAtLoad();
  // Loaded at the first call to the provider (client/http.ts); looked at here only when asked.
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (typeof get === 'function') {
    const http = process.getBuiltinModule('node:http') as Partial<typeof import('node:http')> | undefined;
    if (typeof http?.request !== 'function') missing.push('node:http');
  }
  return missing;
}

/** What the package needs as it loads: `Buffer` and node:crypto. */
function missingAtLoad(): string[] {
  const missing: string[] = [];
  if (typeof (globalThis as { Buffer?: unknown }).Buffer !== 'function') missing.push('Buffer');
  if (nodeCryptoMissing()) missing.push('node:crypto');
  return missing;
}

/** @throws Error naming the `nodejs_compat` flag when the runtime lacks Node's built-in modules. */
export function assertNodeBuiltins(who: string): void {
  const missing = missingAtLoad();
  if (missing.length > 0) throw nodeBuiltinsError(who, missing);
}

/** The error naming the missing modules and the `nodejs_compat` flag. */
export function nodeBuiltinsError(who: string, missing: readonly string[]): Error {
  return new Error(
    `${who}: this runtime does not provide Node's built-in modules (missing: ${missing.join(', ')}). ` +
      'On Cloudflare Workers add the nodejs_compat compatibility flag (compatibility_flags = ["nodejs_compat"] in wrangler.toml or wrangler.jsonc); ' +
      'Node 20.19 or later, Bun and Deno provide them.',
  );
}

assertNodeBuiltins('passport-nd-id');
