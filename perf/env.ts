/** Reading tuning knobs of the bench and load scripts from the environment. */

/** The whole number > 0 in environment variable `name`, or `fallback` when unset or empty. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number`);
  return n;
}
