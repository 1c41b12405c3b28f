/**
 * Every function in a set of source files with its length in lines, read with the TypeScript
 * compiler's own parser: declarations, methods, accessors, constructors, function expressions and
 * arrow functions. A function's length is its whole text, from its first line to its last, so an
 * enclosing function counts whole, and each closure inside it is also listed on its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** The .ts files (declaration files aside) under `dir`, at any depth. */
export function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const text = (name: ts.Node | undefined) => (name ? name.getText(source) : undefined);
  const owner = (member: ts.Node) =>
    ts.isClassLike(member.parent) && member.parent.name ? `${member.parent.name.text}.` : '';
  if (ts.isConstructorDeclaration(node)) return `${owner(node)}constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    return `${owner(node)}${text(node.name)}`;
  }
  if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) {
    if (node.name) return node.name.text;
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return text(parent.name) ?? '<anonymous>';
  }
  if (ts.isCallExpression(parent)) return `<callback of ${text(parent.expression)}>`;
  return '<anonymous>';
}

/** Every function in `file`, with the line it starts on and its length in lines. */
export function functionLengths(file: string, label = file): FunctionLength[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file: label, name: nameOf(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
