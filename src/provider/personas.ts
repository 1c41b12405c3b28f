/** Fictional people to sign in as, and the identity-number check applied to them. */
import type { Persona } from './types.js';

const WEIGHTS = [2, 7, 6, 5, 4, 3, 2] as const;
const ST_LETTERS = 'JZIHGFEDCBA';
const FG_LETTERS = 'XWUTRQPNMLK';
const M_LETTERS = 'KLJNPQRTUWX';

/**
 * The check letter of a national identity number from its prefix (`S`, `T`, `F`, `G` or `M`)
 * and its seven digits, or `undefined` when the input has another shape.
 */
export function nricCheckLetter(prefix: string, digits: string): string | undefined {
  if (!/^[0-9]{7}$/.test(digits)) return undefined;
  let sum = 0;
  for (let i = 0; i < 7; i += 1) sum += WEIGHTS[i]! * Number(digits[i]);
  switch (prefix) {
    case 'S':
      return ST_LETTERS[sum % 11];
    case 'T':
      return ST_LETTERS[(sum + 4) % 11];
    case 'F':
      return FG_LETTERS[sum % 11];
    case 'G':
      return FG_LETTERS[(sum + 4) % 11];
    case 'M':
      return M_LETTERS[10 - ((sum + 3) % 11)];
    default:
      return undefined;
  }
}

/** True when `value` is a prefix letter, seven digits and the matching check letter. */
export function isValidNric(value: unknown): value is string {
  if (typeof value !== 'string' || !/^[STFGM][0-9]{7}[A-Z]$/.test(value)) return false;
  return nricCheckLetter(value[0]!, value.slice(1, 8)) === value[8];
}

/** True when `value` is a real calendar date written `YYYY-MM-DD`. */
export function isIsoDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

function person(id: string, name: string, prefix: string, digits: string, passportExpiry: string): Persona {
  return {
    id,
    'profile.name': name,
    'profile.nric_number': `${prefix}${digits}${nricCheckLetter(prefix, digits) ?? ''}`,
    'profile.passport_expiry_date': passportExpiry,
  };
}

/** The built-in people, clearly fictional; the first is who `autoApprove: true` signs in as. */
export const DEFAULT_PERSONAS: readonly Persona[] = Object.freeze(
  [
    person('ada', 'Ada Testperson', 'S', '1234567', '2031-05-17'),
    person('ben', 'Ben Samplename', 'T', '0123456', '2029-11-02'),
    person('chandra', 'Chandra Fictional', 'F', '7654321', '2027-02-28'),
    person('dewi', 'Dewi Placeholder', 'G', '2345678', '2033-08-09'),
    person('eko', 'Eko Mockington', 'M', '3456789', '2030-01-31'),
    person('farah', 'Farah Demo-Userin', 'S', '8765432', '2026-12-15'),
  ].map((p) => Object.freeze(p)),
);
