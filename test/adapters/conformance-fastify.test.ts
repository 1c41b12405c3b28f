/** The adapter conformance suite (test/adapters/cases.ts) on Fastify: each session plugin, and beside @fastify/passport. */
import { conformanceSuite } from './cases.js';
import { startFastifyApp } from './fastify-app.js';

conformanceSuite([
  ['Fastify, @fastify/session', (o) => startFastifyApp({ ...o, plugin: 'session' })],
  ['Fastify, @fastify/secure-session', (o) => startFastifyApp({ ...o, plugin: 'secure-session' })],
  ['Fastify beside @fastify/passport', (o) => startFastifyApp({ ...o, plugin: 'session', withPassport: true })],
]);
