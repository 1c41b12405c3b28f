/** The provider's people, changeable while it runs: an array with `add` and `remove`, validated like the `personas` option. */
import { checkPersonas } from '../config-checks.js';
import type { Persona } from '../types.js';

/** The provider's personas: a live array with checked `add` and `remove`. */
export class PersonaDirectory extends Array<Persona> {
  /** Array methods that build new arrays (`map`, `filter`) return plain arrays. */
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  /** @param initial the personas to start with (already validated). */
  static create(initial: readonly Persona[]): PersonaDirectory {
    const directory = new PersonaDirectory();
    directory.push(...initial);
    return directory;
  }

  /** The persona with this id, if any. */
  get(id: string): Persona | undefined {
    return this.find((p) => p.id === id);
  }

  /**
   * Adds a persona (or replaces the one with the same id).
   * @throws TypeError naming the field when the persona is not valid.
   */
  add(persona: Persona): Persona {
    const mistakes: string[] = [];
    const [checked] = checkPersonas([persona], mistakes);
    if (mistakes.length > 0 || checked === undefined) {
      throw new TypeError(`personas.add: ${mistakes.map((m) => m.replace(/^personas\[0\]/, 'persona')).join('; ')}`);
    }
    const at = this.findIndex((p) => p.id === checked.id);
    if (at === -1) this.push(checked);
    else this[at] = checked;
    return checked;
  }

  /**
   * Removes the persona with this id; true when there was one. Logins already approved for
   * it fail at the token endpoint.
   * @throws TypeError when it is the last one (the provider needs at least one person).
   */
  remove(id: string): boolean {
    const at = this.findIndex((p) => p.id === id);
    if (at === -1) return false;
    if (this.length === 1)
      throw new TypeError('personas.remove: the last persona cannot be removed; add another first.');
    this.splice(at, 1);
    return true;
  }
}
