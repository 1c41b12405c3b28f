/**
 * The personas the phone page lists: at most {@link MAX_LISTED_PERSONAS} whose id or name holds the
 * search text, so the page stays small; approval still takes any persona by id.
 */
import type { Persona } from './types.js';

/** The most personas the phone page lists at once. */
export const MAX_LISTED_PERSONAS = 50;

/** The longest search text the phone page accepts. */
export const MAX_PERSONA_SEARCH = 64;

/** The personas to list, how many match in all, and the search text. */
export interface PersonaListing {
  listed: Persona[];
  matching: number;
  query: string;
}

/** The listing for `query` ('' lists the first {@link MAX_LISTED_PERSONAS} of all). */
export function listPersonas(all: readonly Persona[], query: string): PersonaListing {
  const needle = query.trim().toLowerCase();
  if (needle === '') return { listed: all.slice(0, MAX_LISTED_PERSONAS), matching: all.length, query: '' };
  const listed: Persona[] = [];
  let matching = 0;
  for (const p of all) {
    if (!p.id.toLowerCase().includes(needle) && !p['profile.name'].toLowerCase().includes(needle)) continue;
    matching++;
    if (listed.length < MAX_LISTED_PERSONAS) listed.push(p);
  }
  return { listed, matching, query: query.trim() };
}
