/**
 * Type tests of the public API: each `@ts-expect-error` line must fail to compile, and every
 * other line must compile. Compiled by test/types/types.test.ts against the built package, as a
 * user's app would import it (and by `npm run typecheck` against the sources).
 */
import { NdIdStrategy, type NdIdUser } from 'passport-nd-id';
import { IdClient } from 'passport-nd-id/client';

const fields = { hostname: 'https://id.example', clientId: 'my-app', clientSecret: 'secret', privateKey: 'PEM' };

// Built from its fields, the strategy needs the callback URL, as callbackURL or redirectUri.
new NdIdStrategy({ ...fields, callbackURL: 'https://app.example/auth/callback' });
new NdIdStrategy({ ...fields, redirectUri: 'https://app.example/auth/callback' });
// @ts-expect-error callbackURL (or a ready client) is required
new NdIdStrategy({ ...fields });
// @ts-expect-error callbackURL is a string
new NdIdStrategy({ ...fields, callbackURL: new URL('https://app.example/auth/callback') });

// With a ready client, the client's redirectUri is used and callbackURL may be left out.
const client = new IdClient({ ...fields, redirectUri: 'https://app.example/auth/callback' });
new NdIdStrategy({ client });
// @ts-expect-error a ready client and the fields are not given together
new NdIdStrategy({ client, clientSecret: 'secret', callbackURL: 'https://app.example/auth/callback' });

// The verify callback's shapes, typed from the options.
new NdIdStrategy({ client }, async (user) => ({ sub: user.sub, name: user.data['profile.name'] }));
new NdIdStrategy({ client }, (user: NdIdUser, done) => done(null, user));
new NdIdStrategy({ client, passReqToCallback: true }, (req, user, done) => done(null, { sub: user.sub, ip: req.ip }));
// @ts-expect-error the request comes first only with passReqToCallback: true
new NdIdStrategy({ client }, (_req: { ip: string }, user: NdIdUser, done: (err: unknown, user?: unknown) => void) =>
  done(null, user),
);

// IdClient needs the service's origin (hostname) or another provider's issuer (checked at construction).
new IdClient({
  clientId: 'my-app',
  clientSecret: 'secret',
  issuer: 'https://login.example/oidc',
  idTokenSigningAlgorithms: ['RS256'],
});
