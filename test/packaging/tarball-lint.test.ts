/**
 * The packed tarball is clean under `publint --strict` and `@arethetypeswrong/cli` (every entry
 * resolves with the right module kind under node10, node16 from CommonJS and from ESM, and
 * bundler), and ships its LICENSE and CHANGELOG.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { packedTarball } from '../helpers/pack.js';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};
let tarball = '';

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
});

describe('the packed tarball', () => {
  it('has no publint finding in strict mode', async () => {
    const buffer = readFileSync(tarball);
    const { messages, pkg: packed } = await publint({
      pack: { tarball: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) },
      strict: true,
      level: 'suggestion',
    });
    expect(messages.map((m) => `${m.type}: ${formatMessage(m, packed) ?? m.code}`)).toEqual([]);
  });

  it('has no @arethetypeswrong problem under node10, node16 (CJS and ESM) and bundler', async () => {
    const cli = join(root, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    expect(existsSync(cli)).toBe(true);
    const result = await promisify(execFile)(process.execPath, [cli, tarball, '--format', 'json'], {
      timeout: 120_000,
    }).then(
      ({ stdout }) => stdout,
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    const report = JSON.parse(result) as {
      analysis: {
        problems: unknown[];
        entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string } }> }>;
      };
    };
    expect(report.analysis.problems).toEqual([]);
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual([
      '.',
      './client',
      './fastify',
      './fetch',
      './nest',
      './package.json',
      './provider',
    ]);
    const provider = report.analysis.entrypoints['./provider']!.resolutions;
    expect(provider.node10?.resolution?.fileName).toMatch(/cjs\/provider\/index\.d\.ts$/);
    expect(provider['node16-esm']?.resolution?.fileName).toMatch(/esm\/provider\/index\.d\.ts$/);
    for (const entry of ['client', 'fetch', 'nest', 'fastify']) {
      const resolutions = report.analysis.entrypoints[`./${entry}`]!.resolutions;
      expect(resolutions.node10?.resolution?.fileName, entry).toMatch(new RegExp(`cjs/${entry}\\.d\\.ts$`));
      expect(resolutions['node16-esm']?.resolution?.fileName, entry).toMatch(new RegExp(`esm/${entry}\\.d\\.ts$`));
    }
  }, 120_000);

  it('ships an MIT LICENSE matching package.json, and a Keep a Changelog CHANGELOG.md', async () => {
    const { stdout } = await promisify(execFile)('tar', ['-tzf', tarball]);
    const files = stdout.split('\n');
    expect(files).toContain('package/LICENSE');
    expect(files).toContain('package/CHANGELOG.md');
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain('keepachangelog.com');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    expect(changelog).toMatch(/jose 6/);
  });

  it('makes express, passport and the OpenTelemetry API optional peers', () => {
    expect(pkg.peerDependenciesMeta).toEqual({
      '@opentelemetry/api': { optional: true },
      express: { optional: true },
      passport: { optional: true },
    });
  });

  it('declares sideEffects: false, and its ES module build is ES modules (no CommonJS wrapper)', async () => {
    const packed = JSON.parse(
      (await promisify(execFile)('tar', ['-xOzf', tarball, 'package/package.json'])).stdout,
    ) as { sideEffects?: unknown };
    expect(packed.sideEffects).toBe(false);
    const esm = JSON.parse(
      (await promisify(execFile)('tar', ['-xOzf', tarball, 'package/dist/esm/package.json'])).stdout,
    ) as { type?: unknown };
    expect(esm.type).toBe('module');
    const index = (await promisify(execFile)('tar', ['-xOzf', tarball, 'package/dist/esm/index.js'])).stdout;
    expect(index).not.toMatch(/dist\/cjs|require\(/);
  });
});
