/** The scopes the provider knows, and which of them carry personal data. */
import type { Persona } from './types.js';

/** Scopes that return an attribute of the person. */
export const DATA_SCOPES = ['profile.name', 'profile.nric_number', 'profile.passport_expiry_date'] as const;

/** A scope that returns an attribute. */
export type DataScope = (typeof DATA_SCOPES)[number];

/** Every scope an authorization request may ask for. */
export const SUPPORTED_SCOPES: readonly string[] = ['openid', ...DATA_SCOPES];

/** The `scopes_supported` value of the discovery document, exactly as spec section 4.5 lists it. */
export const ADVERTISED_SCOPES: readonly string[] = ['openid', 'profile.nric_number', 'profile.name'];

/** True when `scope` returns an attribute. */
function isDataScope(scope: string): scope is DataScope {
  return (DATA_SCOPES as readonly string[]).includes(scope);
}

/** The attribute values of `persona` for the granted data scopes. */
export function attributesFor(persona: Persona, scopes: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const scope of scopes) if (isDataScope(scope)) out[scope] = persona[scope];
  return out;
}
