/**
 * The provider's entry for tests: everything it exports, with `startProvider` given a signing key
 * from the run's key pool (test/helpers/keys.ts) unless the test gives one, rather than making an
 * RSA key per provider (the suite starts hundreds). Key rotation still makes new keys.
 */
import {
  startProvider as startWithOptions,
  type StartedProvider,
  type StartProviderOptions,
} from '../../src/provider/index.js';
import { pooledKeyPair } from './keys.js';

export * from '../../src/provider/index.js';

export function startProvider(options: StartProviderOptions): Promise<StartedProvider> {
  return startWithOptions(
    options.signingKey === undefined ? { ...options, signingKey: pooledKeyPair().privateKeyPem } : options,
  );
}
