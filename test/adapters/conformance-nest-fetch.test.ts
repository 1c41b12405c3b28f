/** The adapter conformance suite (test/adapters/cases.ts) on NestJS and on the fetch handlers in Hono. */
import { conformanceSuite } from './cases.js';
import { startHonoApp } from './hono-app.js';
import { startNestConformanceApp } from './nest-app.js';

conformanceSuite([
  ['NestJS', (o) => startNestConformanceApp(o)],
  ['fetch handlers on Hono', (o) => startHonoApp(o)],
]);
