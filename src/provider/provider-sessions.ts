/** The provider sessions (one per sign-in, its `sid` in the ID token), for back-channel logout. */
import { pooledRandomToken } from './random-pool.js';

/** Most provider sessions remembered; past it the oldest is forgotten (a sign-out no longer reaches it). */
export const MAX_PROVIDER_SESSIONS = 100_000;

/** One sign-in at the provider: a person at a client. */
export interface ProviderSession {
  clientId: string;
  personaId: string;
  sub: string;
}

/** Which sessions a sign-out ends: all of a persona's, or one provider session. */
export interface ProviderSignOut {
  /** Every session of this persona (at every client). */
  persona?: string;
  /** One provider session, by its `sid`. */
  sid?: string;
}

/** The provider sessions of one provider instance, by `sid`. */
export class ProviderSessions {
  readonly #sessions = new Map<string, ProviderSession>();

  /** Records a sign-in and returns its new `sid`. */
  start(clientId: string, personaId: string, sub: string): string {
    const sid = pooledRandomToken(16);
    this.#sessions.set(sid, { clientId, personaId, sub });
    if (this.#sessions.size > MAX_PROVIDER_SESSIONS) {
      const oldest = this.#sessions.keys().next().value as string;
      this.#sessions.delete(oldest);
    }
    return sid;
  }

  /** Forgets and returns the sessions a sign-out names. */
  end(signOut: ProviderSignOut): Array<ProviderSession & { sid: string }> {
    const ended: Array<ProviderSession & { sid: string }> = [];
    for (const [sid, session] of this.#sessions) {
      if (sid === signOut.sid || (signOut.persona !== undefined && session.personaId === signOut.persona)) {
        ended.push({ sid, ...session });
        this.#sessions.delete(sid);
      }
    }
    return ended;
  }

  clear(): void {
    this.#sessions.clear();
  }
}
