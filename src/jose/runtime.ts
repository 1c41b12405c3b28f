/**
 * Whether the runtime's node:crypto has what the JOSE code here calls (a bundler's empty stand-in
 * for the module, or workerd without `nodejs_compat`, has not): read through the namespace.
 */
import * as crypto from 'node:crypto';

/** True when node:crypto lacks a function the JOSE code needs. */
export function nodeCryptoMissing(): boolean {
  const c = crypto as Partial<typeof crypto>;
  return (
    typeof c.createPrivateKey !== 'function' ||
    typeof c.privateDecrypt !== 'function' ||
    typeof c.createDecipheriv !== 'function' ||
    typeof c.hkdfSync !== 'function'
  );
}
