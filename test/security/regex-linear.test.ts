/**
 * Section 2: every regular expression in src/ runs in linear time. The TypeScript parser finds
 * each regex literal and each `new RegExp(...)` / `RegExp(...)` with literal arguments (so a new
 * one is covered without editing this test); each is run in a worker thread against
 * pathological 20 000-character inputs (runs of every character class, with a trailing
 * mismatch), under a time limit per expression: a backtracking one fails the test, naming its
 * file and line, instead of hanging it. The limit is a hang guard, generous enough for a shared
 * machine, not a measurement: a linear expression takes milliseconds on all inputs together.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Worker } from 'node:worker_threads';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const LIMIT_MS = 5_000;
const LENGTH = 20_000;

interface FoundRegex {
  where: string;
  source: string;
  flags: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every regex in `file`; an expression built from non-literal parts is reported as such. */
function regexesIn(file: string, unresolved: string[]): FoundRegex[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FoundRegex[] = [];
  const where = (node: ts.Node): string =>
    `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = (node as ts.RegularExpressionLiteral).text;
      const slash = literal.lastIndexOf('/');
      found.push({ where: where(node), source: literal.slice(1, slash), flags: literal.slice(slash + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [pattern, flags] = node.arguments ?? [];
      if (
        pattern !== undefined &&
        ts.isStringLiteralLike(pattern) &&
        (flags === undefined || ts.isStringLiteralLike(flags))
      ) {
        found.push({ where: where(node), source: pattern.text, flags: flags?.text ?? '' });
      } else {
        unresolved.push(where(node));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const unresolved: string[] = [];
const REGEXES = sourceFiles(join(root, 'src')).flatMap((file) => regexesIn(file, unresolved));

/** Runs in the worker: every input against one expression, then reports. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { source, flags, length } = workerData;
const re = new RegExp(source, flags.replace(/[gy]/g, ''));
const singles = ['a', 'A', 'z', '0', '9', '-', '_', '.', ':', '/', '\\\\', '%', '=', '+', '!', '@', '#', '?', '&', ',', ';', '*', '"', "'", '<', '>', '(', ')', '[', ']', '{', '}', ' ', '\\t', '\\n', '\\u0000', '\\u007f', '\\u00e9', '\\u4e2d', 'x', 's', 'e'];
const pairs = ['a.', 'a-', 'a:', '0.', 'a/', 'a ', 'a=', '%2', 'a,', 'a;', '. ', 'a\\\\'];
// A literal run at the start of the expression (after ^), so anchored expressions get past it.
const prefix = (source.replace(/^\\^/, '').match(/^(?:[A-Za-z0-9 :=_-]|\\\\[/.-])*/) || [''])[0].replace(/\\\\/g, '');
const tails = ['\\u0000', '!', '\\n', '\\u4e2d', ''];
let runs = 0;
for (const unit of [...singles, ...pairs]) {
  const body = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  for (const tail of tails) {
    for (const head of prefix === '' ? [''] : ['', prefix]) {
      re.test(head + body + tail);
      re.test(head + tail + body + tail);
      runs += 2;
    }
  }
}
parentPort.postMessage(runs);
`;

function runUnderLimit(regex: FoundRegex): Promise<'linear' | 'too slow'> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { source: regex.source, flags: regex.flags, length: LENGTH },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve('too slow');
    }, LIMIT_MS);
    worker.once('message', () => {
      clearTimeout(timer);
      void worker.terminate();
      resolve('linear');
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('every regular expression in src/', () => {
  it('is found by the parser (the scan is not empty) and every RegExp is built from literals', () => {
    expect(REGEXES.length).toBeGreaterThan(20);
    expect(unresolved).toEqual([]);
  });

  it.each(REGEXES.map((r) => [r.where, `/${r.source}/${r.flags}`, r] as const))(
    '%s %s stays within its time limit on 20 000-character pathological inputs',
    async (_where, _text, regex) => {
      expect(await runUnderLimit(regex)).toBe('linear');
    },
    LIMIT_MS + 10_000,
  );
});
