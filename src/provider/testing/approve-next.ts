/**
 * Scripted sign-ins: `provider.approveNext(...)` queues the answer to the next authorization
 * request, without the QR page, so a test can sign in with nothing but HTTP redirects.
 */
import type { LoginOverrides } from '../store.js';
import { SUPPORTED_SCOPES } from '../scopes.js';
import type { Persona } from '../types.js';
import type { PersonaDirectory } from './persona-directory.js';

/** What `provider.approveNext()` takes: the answer to one authorization request. */
export interface ApproveNextOptions {
  /** Who approves: a persona id, or a full persona (added to the provider's personas). Default: the first persona. */
  persona?: string | Persona;
  /** Only an authorization request of this client takes this answer. Default: the next request of any client. */
  clientId?: string;
  /**
   * ID-token claims for this login: set a value, or remove a claim with `undefined`. Numbers
   * for `exp`, `iat`, `nbf` and `auth_time` are seconds relative to now (`{ exp: -60 }` is a
   * token that expired a minute ago).
   */
  claims?: Record<string, unknown>;
  /** Attribute values for this login, by scope name (`{ 'profile.name': 'Someone Else' }`). */
  data?: Partial<Record<string, string>>;
  /** Deny instead of approving: the app receives `error=access_denied`. */
  deny?: boolean;
}

/** A queued answer, checked. */
export interface ScriptedLogin {
  clientId: string | undefined;
  deny: boolean;
  persona: Persona;
  overrides: LoginOverrides | undefined;
}

const KEYS = new Set(['persona', 'clientId', 'claims', 'data', 'deny']);

/** The queue of scripted answers of one provider. */
export class ScriptedLogins {
  private readonly queue: ScriptedLogin[] = [];

  constructor(private readonly personas: PersonaDirectory) {}

  /**
   * Queues one answer.
   * @throws TypeError naming the option when it cannot be used.
   */
  enqueue(options: ApproveNextOptions = {}): void {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('approveNext: options must be an object (or left out).');
    for (const key of Object.keys(options)) {
      if (!KEYS.has(key)) throw new TypeError(`approveNext: unknown option "${key}"; known: ${[...KEYS].join(', ')}.`);
    }
    const { persona, clientId, claims, data, deny } = options;
    if (clientId !== undefined && typeof clientId !== 'string')
      throw new TypeError('approveNext: clientId must be a string.');
    if (deny !== undefined && typeof deny !== 'boolean')
      throw new TypeError('approveNext: deny must be true or false.');
    if (deny === true && (claims !== undefined || data !== undefined)) {
      throw new TypeError('approveNext: deny cannot be combined with claims or data (a denied login has no tokens).');
    }
    if (claims !== undefined && (typeof claims !== 'object' || claims === null || Array.isArray(claims))) {
      throw new TypeError(
        'approveNext: claims must be an object of claim names to values (undefined removes a claim).',
      );
    }
    if (data !== undefined) {
      if (typeof data !== 'object' || data === null || Array.isArray(data))
        throw new TypeError('approveNext: data must be an object of scope names to strings.');
      for (const [scope, value] of Object.entries(data)) {
        if (!SUPPORTED_SCOPES.includes(scope) || scope === 'openid') {
          throw new TypeError(
            `approveNext: data["${scope}"] is not an attribute; known: ${SUPPORTED_SCOPES.filter((s) => s !== 'openid').join(', ')}.`,
          );
        }
        if (typeof value !== 'string') throw new TypeError(`approveNext: data["${scope}"] must be a string.`);
      }
    }
    let chosen: Persona | undefined;
    if (persona === undefined) chosen = this.personas[0];
    else if (typeof persona === 'string') {
      chosen = this.personas.get(persona);
      if (chosen === undefined) {
        throw new TypeError(
          `approveNext: persona "${persona}" is unknown; known: ${this.personas.map((p) => p.id).join(', ')}.`,
        );
      }
    } else chosen = this.personas.add(persona);
    if (chosen === undefined) throw new TypeError('approveNext: the provider has no persona to approve as.');
    const overrides: LoginOverrides = {
      ...(claims === undefined ? {} : { claims: { ...claims } }),
      ...(data === undefined ? {} : { data: { ...(data as Record<string, string>) } }),
    };
    this.queue.push({
      clientId,
      deny: deny === true,
      persona: chosen,
      overrides: claims === undefined && data === undefined ? undefined : overrides,
    });
  }

  /** Takes the first queued answer meant for `clientId` (or for any client), if any. */
  take(clientId: string): ScriptedLogin | undefined {
    const at = this.queue.findIndex((s) => s.clientId === undefined || s.clientId === clientId);
    return at === -1 ? undefined : this.queue.splice(at, 1)[0];
  }

  /** Answers still queued. */
  get size(): number {
    return this.queue.length;
  }

  /** Drops every queued answer. */
  clear(): void {
    this.queue.length = 0;
  }
}
