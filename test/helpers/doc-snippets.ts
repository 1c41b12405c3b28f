/**
 * The code snippets of the documentation: README.md and every docs/*.md. A fence may be marked on one of the two lines above it with
 * `<!-- readme-test: KIND ARGS -->`: `run` (the README's Express app), `script` (run as a
 * script whose assertions must hold) or `recipe` (an app that signs a person in).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One fenced snippet of a documentation page. */
export interface DocSnippet {
  /** The page, relative to the repository root (`README.md`, `docs/fastify.md`). */
  file: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
  /** The fence's language (`ts`, `sh`, `json`). */
  lang: string;
  /** The snippet's text, ending with a newline. */
  code: string;
  /** The marker's kind (`run`, `script`, `recipe`), when the fence is marked. */
  kind?: string;
  /** The marker's `name=value` arguments. */
  args: Record<string, string>;
  /** A file-name-safe id: `docs-fastify-md-line-60`. */
  id: string;
}

/** The repository root. */
export const repoRoot = join(__dirname, '..', '..');

/** The documentation pages, README.md first. */
export function docFiles(root = repoRoot): string[] {
  const pages = readdirSync(join(root, 'docs'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ['README.md', ...pages];
}

/** The text of one documentation page. */
export function readDoc(file: string, root = repoRoot): string {
  return readFileSync(join(root, file), 'utf8');
}

/**
 * The `npm` lines (`npm install`, `npm pkg set`) of the first ```sh block after `heading` in
 * `file` (of the page, without a heading), each split into words.
 */
export function installLines(file: string, heading?: string, root = repoRoot): string[][] {
  const text = readDoc(file, root);
  const at = heading === undefined ? 0 : text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file} has no "${heading}" section`);
  const open = text.indexOf('```sh\n', at);
  if (open < 0) throw new Error(`${file} has no sh block${heading === undefined ? '' : ` after "${heading}"`}`);
  const block = text.slice(open + 6, text.indexOf('\n```', open + 6));
  return block
    .split('\n')
    .filter((line) => line.startsWith('npm '))
    .map((line) => line.split(/\s+/));
}

const MARKER = /<!--\s*readme-test:\s*([a-z]+)((?:\s+[\w-]+=\S+)*)\s*-->/;

/** Every fenced snippet of every page (of language `lang` when given). */
export function docSnippets(lang?: string, root = repoRoot): DocSnippet[] {
  const snippets: DocSnippet[] = [];
  for (const file of docFiles(root)) {
    const lines = readDoc(file, root).split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w+)\s*$/.exec(lines[i]!.trim());
      if (!open) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
      if (lang !== undefined && open[1] !== lang) continue;
      const marker = MARKER.exec(lines.slice(Math.max(0, start - 2), start).join('\n'));
      const args: Record<string, string> = {};
      for (const [, name, value] of (marker?.[2] ?? '').matchAll(/([\w-]+)=(\S+)/g)) args[name!] = value!;
      snippets.push({
        file,
        line: start + 1,
        lang: open[1]!,
        code: `${body.join('\n')}\n`,
        ...(marker ? { kind: marker[1]! } : {}),
        args,
        id: `${file.replace(/\W+/g, '-')}-line-${start + 1}`,
      });
    }
  }
  return snippets;
}

/** Replaces snippet file names (`<id>.mts`) in a message with the page and line they came from. */
export function pointAtDocs(message: string): string {
  return message.replace(
    /([\w-]+)-md-line-(\d+)\.mts/g,
    (_all, page: string, line: string) => `${page.replace(/^docs-/, 'docs/')}.md snippet at line ${line}`,
  );
}

/**
 * Writes `dir/tsconfig.json` for running snippets with tsx (`TSX_TSCONFIG_PATH`, returned) as an
 * app that installed the package runs them: without the repository's source paths, so
 * `passport-nd-id` is the built package, loaded through its "exports".
 */
export function installedAppTsconfig(dir: string, compilerOptions: Record<string, unknown> = {}): string {
  const file = join(dir, 'tsconfig.json');
  writeFileSync(file, JSON.stringify({ compilerOptions: { target: 'ES2022', ...compilerOptions } }));
  return file;
}
