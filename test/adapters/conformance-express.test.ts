/** The adapter conformance suite (test/adapters/cases.ts) on Express: plain `passport.authenticate('nd-id')` and `ndIdRouter()`. */
import { startExpressApp } from '../sessions/harness.js';
import { conformanceSuite } from './cases.js';

conformanceSuite([
  ['Express, plain passport.authenticate', (o) => startExpressApp({ ...o, routes: 'plain' })],
  ['Express, ndIdRouter', (o) => startExpressApp(o)],
]);
