/**
 * The guides can be reached from an install: the packed tarball ships docs/*.md beside the
 * README, every relative link in the packed README and guides points at a file inside the
 * tarball (and at a heading that exists there, for links with an anchor), and package.json names
 * the repository, homepage and issue tracker (the registry's page resolves the README's relative
 * links against the repository).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { packedTarball } from '../helpers/pack.js';

const root = join(__dirname, '..', '..');
const REPOSITORY = 'https://github.com/passport-nd-id/passport-nd-id';
let tarball = '';
let unpacked = '';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[`*_]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

/** The markdown without fenced code blocks. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
}

/** The markdown without fenced code blocks and inline code (links there are not links). */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** The anchors of a markdown file's headings, with GitHub's -1, -2 suffixes for repeats. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(text!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(id!);
  return out;
}

/** Every link target of a markdown file: inline links and reference definitions. */
function links(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
  unpacked = mkdtempSync(join(tmpdir(), 'nd-id-docs-unpacked-'));
  execFileSync('tar', ['-xzf', tarball, '-C', unpacked]);
});

afterAll(() => {
  if (unpacked) rmSync(unpacked, { recursive: true, force: true });
});

describe('the docs in the packed tarball', () => {
  it('ship every guide of docs/ beside the README', () => {
    const pkg = join(unpacked, 'package');
    const guides = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
    expect(guides.length).toBeGreaterThan(10);
    for (const guide of guides) expect(existsSync(join(pkg, 'docs', guide)), `docs/${guide}`).toBe(true);
    expect(existsSync(join(pkg, 'README.md'))).toBe(true);
  });

  it('have every relative link of the README and the guides resolve inside the tarball, anchors included', () => {
    const pkg = join(unpacked, 'package');
    const files = [
      'README.md',
      ...readdirSync(join(pkg, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      const markdown = readFileSync(join(pkg, file), 'utf8');
      for (const target of links(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
        checked += 1;
        const [path = '', anchor] = target.split('#');
        const resolved =
          path === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(path)));
        const onDisk = join(pkg, resolved);
        if (resolved.startsWith('..') || !existsSync(onDisk)) {
          broken.push(`${file}: ${target} (no ${resolved} in the tarball)`);
          continue;
        }
        if (
          anchor !== undefined &&
          anchor !== '' &&
          resolved.endsWith('.md') &&
          !anchors(readFileSync(onDisk, 'utf8')).has(anchor)
        ) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('come with the repository, homepage and issue tracker in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(unpacked, 'package', 'package.json'), 'utf8')) as {
      repository?: { type?: string; url?: string };
      homepage?: string;
      bugs?: { url?: string };
    };
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git` });
    expect(pkg.homepage).toBe(`${REPOSITORY}#readme`);
    expect(pkg.bugs).toEqual({ url: `${REPOSITORY}/issues` });
  });

  it('the link checker finds a broken link and a missing anchor', () => {
    const markdown =
      '# Title\n\nSee [a](missing.md), [b](#nowhere), [c](#title) and `[d](ignored.md)`.\n\n```md\n[e](also-ignored.md)\n```\n';
    expect(links(markdown)).toEqual(['missing.md', '#nowhere', '#title']);
    expect([...anchors(markdown)]).toEqual(['title']);
    expect(slug('Several instances: the replay store')).toBe('several-instances-the-replay-store');
    expect(slug('Client authentication (`strictClientAuth`)')).toBe('client-authentication-strictclientauth');
  });
});
