/** What every endpoint handler shares: configuration, keys, stores. */
import type { ResolvedConfig } from './config.js';
import type { SigningKeys } from './crypto.js';
import type { ClientJwks } from './fapi/client-jwks.js';
import type { DpopNonces } from './fapi/dpop-nonces.js';
import type { ProviderStores } from './store.js';
import type { Audit } from './testing/audit.js';
import type { ProviderSessions } from './provider-sessions.js';
import type { Conformance } from './testing/conformance.js';
import type { ScriptedLogins } from './testing/approve-next.js';
import type { PersonaDirectory } from './testing/persona-directory.js';
import type { Persona, ProviderEndpoint } from './types.js';

/** Shared state and helpers of one provider instance. */
export interface ProviderContext {
  config: ResolvedConfig;
  keys: SigningKeys;
  stores: ProviderStores;
  /** Log a line about an endpoint, when logging is on. Never pass secrets, tokens or attribute values. */
  log(endpoint: ProviderEndpoint, message: string): void;
  /** The people the provider can sign in as (changeable at run time). */
  personas: PersonaDirectory;
  /** What the relying parties did wrong (see testing/audit.ts). */
  audit: Audit;
  /** The offline conformance plan (see testing/conformance.ts). */
  conformance: Conformance;
  /** Answers queued by `approveNext`, taken by the authorization endpoint. */
  scripted: ScriptedLogins;
  /** The persona with this id, if any. */
  persona(id: string): Persona | undefined;
  /** The pairwise `sub` of a persona for a client. */
  subjectFor(clientId: string, personaId: string): string;
  /** FAPI 2.0: the public keys of FAPI clients (inline, or fetched from their jwksUri). */
  clientJwks: ClientJwks;
  /** FAPI 2.0: the DPoP server nonces, when the `dpopNonce` option is on. */
  dpopNonces: DpopNonces | undefined;
  /** The provider sessions (one per sign-in, its `sid` in the ID token), for back-channel logout. */
  sessions: ProviderSessions;
}
