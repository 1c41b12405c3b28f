/** Checks shared by the provider's options: unknown keys, whole numbers, personas. */
import { readFileSync } from 'node:fs';
import { isRecord } from '../encoding.js';
import { didYouMean } from '../options-check.js';
import { camelCaseOf } from './fapi/registration.js';
import { DEFAULT_PERSONAS, isIsoDate, isValidNric } from './personas.js';
import type { Persona } from './types.js';

const PERSONA_KEYS = new Set(['id', 'profile.name', 'profile.nric_number', 'profile.passport_expiry_date']);

export function isPositiveInt(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= max;
}

export function unknownKeys(
  obj: Record<string, unknown>,
  allowed: Set<string>,
  where: string,
  mistakes: string[],
): void {
  for (const key of Object.keys(obj)) {
    if (allowed.has(key)) continue;
    const camel = camelCaseOf(key);
    mistakes.push(
      camel !== undefined && allowed.has(camel)
        ? `${where} has "${key}": write it "${camel}", as the other registration fields`
        : `${where} has an unknown option "${key}"${didYouMean(key, [...allowed])}; allowed: ${[...allowed].join(', ')}`,
    );
  }
}

/** Checks personas (an array, or the path of a JSON file), one mistake per problem, naming the field. */
export function checkPersonas(value: unknown, mistakes: string[]): readonly Persona[] {
  if (value === undefined) return DEFAULT_PERSONAS;
  if (typeof value === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(value, 'utf8'));
    } catch (err) {
      const why = err instanceof SyntaxError ? 'is not valid JSON' : 'cannot be read';
      mistakes.push(
        `personas file "${value}" ${why}: give a JSON array of { id, "profile.name", "profile.nric_number", "profile.passport_expiry_date" }`,
      );
      return [];
    }
    return checkPersonas(parsed, mistakes);
  }
  if (!Array.isArray(value) || value.length === 0) {
    mistakes.push('personas must be a non-empty array when given');
    return [];
  }
  const ids = new Set<string>();
  const personas: Persona[] = [];
  value.forEach((raw: unknown, i) => {
    const where = `personas[${i}]`;
    if (!isRecord(raw)) {
      mistakes.push(`${where} must be an object`);
      return;
    }
    unknownKeys(raw, PERSONA_KEYS, where, mistakes);
    const id = raw['id'];
    let ok = true;
    if (typeof id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(id)) {
      mistakes.push(`${where}.id must be 1 to 64 characters of A-Z a-z 0-9 . _ -`);
      ok = false;
    } else if (ids.has(id)) {
      mistakes.push(`${where}.id "${id}" is a duplicate`);
      ok = false;
    }
    const name = raw['profile.name'];
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
      mistakes.push(`${where}["profile.name"] must be a non-empty string of at most 200 characters`);
      ok = false;
    }
    if (!isValidNric(raw['profile.nric_number'])) {
      mistakes.push(
        `${where}["profile.nric_number"] must be a prefix S, T, F, G or M, seven digits and the right check letter`,
      );
      ok = false;
    }
    if (!isIsoDate(raw['profile.passport_expiry_date'])) {
      mistakes.push(`${where}["profile.passport_expiry_date"] must be a real date written YYYY-MM-DD`);
      ok = false;
    }
    if (ok && typeof id === 'string') {
      ids.add(id);
      personas.push(Object.freeze({ ...(raw as unknown as Persona) }));
    }
  });
  return Object.freeze(personas);
}
