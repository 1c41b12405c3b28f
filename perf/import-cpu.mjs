/**
 * `npm run bench:import`: the CPU time Node spends importing an entry of the built package (the
 * ES module build, as `import 'passport-nd-id'` loads it), beside openid-client 6 (the reference
 * OpenID Connect client). Each measurement is a fresh Node process that reads `process.cpuUsage()`
 * just before and just after one `await import(entry)`, so Node's own start-up is not counted.
 * Targets run interleaved, round after round, so a burst of load from elsewhere on the machine
 * hits all of them alike; each figure is the target's median round.
 *
 * Goals: the root entry at most 1.5x openid-client's, `passport-nd-id/client` at most 1x.
 * Environment: BENCH_ROUNDS (default 21). Run `npm run build` first.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new TypeError('BENCH_ROUNDS must be a positive integer.');
if (!existsSync(join(root, 'dist/esm/index.js')))
  throw new Error('dist/esm/index.js is missing: run npm run build first.');

/** [label, how it is loaded, specifier] */
const TARGETS = [
  ['openid-client 6', 'import', 'openid-client'],
  ['passport-nd-id', 'import', 'passport-nd-id'],
  ['passport-nd-id/client', 'import', 'passport-nd-id/client'],
  ['passport-nd-id/fetch', 'import', 'passport-nd-id/fetch'],
  ['passport-nd-id (require)', 'require', 'passport-nd-id'],
];

/** CPU ms (user + system) of one import of `spec` in a fresh process started in the repository. */
function measure(kind, spec) {
  const load =
    kind === 'import'
      ? `await import(${JSON.stringify(spec)})`
      : `createRequire(process.cwd() + '/')(${JSON.stringify(spec)})`;
  const code = `import { createRequire } from 'node:module';\nconst t = process.cpuUsage();\n${load};\nconst u = process.cpuUsage(t);\nconsole.log((u.user + u.system) / 1000);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
  return Number(out.trim().split('\n').pop());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (const [, kind, spec] of TARGETS) measure(kind, spec); // warm the file system cache
const samples = new Map(TARGETS.map(([label]) => [label, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  // Each round starts with the next target, so none is always measured right after the same other one.
  for (let i = 0; i < TARGETS.length; i += 1) {
    const [label, kind, spec] = TARGETS[(round + i) % TARGETS.length];
    samples.get(label).push(measure(kind, spec));
  }
}

const reference = median(samples.get('openid-client 6'));
console.log(
  `Import CPU, median of ${ROUNDS} rounds (Node ${process.version}, ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}):`,
);
for (const [label] of TARGETS) {
  const m = median(samples.get(label));
  console.log(`  ${label.padEnd(26)} ${m.toFixed(1).padStart(6)} ms  ${(m / reference).toFixed(2)}x openid-client`);
}
const ratio = (label) => median(samples.get(label)) / reference;
console.log(
  `Goals: root ${ratio('passport-nd-id').toFixed(2)}x (at most 1.5x), client ${ratio('passport-nd-id/client').toFixed(2)}x (at most 1x).`,
);
