/** The object {@link createProvider} returns. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../clock.js';
import type { FaultControl } from './faults/kinds.js';
import type { AuditFinding } from './testing/audit.js';
import type { ConformancePlan } from './testing/conformance.js';
import type { ApproveNextOptions } from './testing/approve-next.js';
import type { PersonaDirectory } from './testing/persona-directory.js';
import type { ClientPublicKey } from './types.js';
import type { BackchannelDelivery, ProviderSignOut } from './backchannel-logout.js';

/**
 * A plain Node request handler: `http.createServer(handler)`, or mounted by Express
 * (`app.use('/idp', handler)`), Connect or Fastify's middie. A path the provider does not serve
 * goes to `next()` when there is one, and gets a JSON 404 otherwise.
 */
export type ProviderHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** A running provider: its request handler and its controls. */
export interface Provider {
  /** The provider as a plain Node request handler (see {@link ProviderHandler}). */
  handler: ProviderHandler;
  /** `baseUrl + basePath + '/v2'`. */
  issuer: string;
  /** The service origin. */
  baseUrl: string;
  /** The people the mobile app can sign in as: an array, changeable with `add(persona)` and `remove(id)`. */
  personas: PersonaDirectory;
  /** The clock the provider reads (movable with {@link Provider.advanceClock}); hand it to a relying party as its `clock`. */
  clock: Clock;
  /** Moves the provider's clock forward by `ms`: codes, tokens and QR pages expire without waiting. */
  advanceClock(ms: number): void;
  /**
   * Answers the next authorization request (of `clientId`, or any) at once, without the QR page:
   * approved as a persona, with changed ID-token claims or attribute values, or denied. Calls queue.
   */
  approveNext(options?: ApproveNextOptions): void;
  /** Replaces a client's public keys (oldest first; userinfo is encrypted to the last). */
  setClientKeys(clientId: string, publicKeys: ClientPublicKey[]): void;
  /** Publish a new signing key and sign with it; the old key stays in the JWKS for `ttl.signingKeyGrace`. */
  rotateSigningKey(): Promise<void>;
  /**
   * Signs a person out at the provider: every session of `persona`, or the one provider session
   * `sid` (the ID token's). Each client of theirs with a `backchannelLogoutUri` is POSTed a logout
   * token; resolves with each delivery's outcome once all have settled (at most 5 s each). A
   * delivery not answered 200 is the audit finding `backchannel_logout_failed`.
   */
  signOut(signOut: ProviderSignOut): Promise<BackchannelDelivery[]>;
  /** The pairwise `sub` a client receives for a persona (for tests and tooling). */
  subjectFor(clientId: string, personaId: string): string;
  /** Make the provider misbehave on purpose, for tests: see {@link FaultControl}. */
  faults: FaultControl;
  /**
   * What the relying party did wrong so far (of `clientId`, or of every client): reused or missing
   * state, nonce or PKCE, codes redeemed twice, wrong secrets, unregistered redirect URIs, ID
   * tokens it did not check. Only keyed hashes of what the client sent are kept, capped per client.
   */
  audit(clientId?: string): AuditFinding[];
  /**
   * The offline conformance plan: after `start()`, consecutive authorizations of the client each
   * receive one hostile (or positive) case; `results()` says, per case, whether the app passed.
   */
  conformance: ConformancePlan;
  /** Forget every pending authorization, code, access token and injected fault; end latency waits. */
  close(): void;
}
