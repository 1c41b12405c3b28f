/**
 * One audited JOSE module: nothing in `src/` outside `src/jose/` (and the provider, which keeps
 * jose) calls node:crypto's signature, cipher, key-agreement or RSA-encryption functions. Read
 * with the TypeScript compiler's syntax tree: named imports of those functions, calls through a
 * namespace import (or a variable holding it), and any run-time load of node:crypto by `require`,
 * `import()` or `process.getBuiltinModule`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');
const ALLOWED = ['jose', 'provider'].map((d) => join(SRC, d));

/** The node:crypto functions only `src/jose` may call. */
const OWNED = new Set([
  'sign',
  'verify',
  'createSign',
  'createVerify',
  'createCipheriv',
  'createDecipheriv',
  'createCipher',
  'createDecipher',
  'createECDH',
  'ECDH',
  'diffieHellman',
  'createDiffieHellman',
  'createDiffieHellmanGroup',
  'getDiffieHellman',
  'publicEncrypt',
  'privateDecrypt',
  'privateEncrypt',
  'publicDecrypt',
  'subtle',
  'webcrypto',
]);
const CRYPTO = new Set(['node:crypto', 'crypto']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Each use of an owned node:crypto function in `text`, as `line: what`. */
function ownedCryptoUses(text: string, fileName = 'file.ts'): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const namespaces = new Set<string>();
  const at = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const isCryptoModule = (node: ts.Node | undefined) =>
    node !== undefined && ts.isStringLiteral(node) && CRYPTO.has(node.text);
  const unwrap = (node: ts.Expression): ts.Expression =>
    ts.isAsExpression(node) || ts.isParenthesizedExpression(node) || ts.isTypeAssertionExpression(node)
      ? unwrap(node.expression)
      : node;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && isCryptoModule(node.moduleSpecifier) && !node.importClause?.isTypeOnly) {
      const bindings = node.importClause?.namedBindings;
      if (node.importClause?.name) namespaces.add(node.importClause.name.text);
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) {
          const name = (element.propertyName ?? element.name).text;
          if (!element.isTypeOnly && OWNED.has(name)) found.push(`${at(element)}: imports ${name}`);
        }
      }
    }
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isIdentifier(node.name)) {
      const value = unwrap(node.initializer);
      if (ts.isIdentifier(value) && namespaces.has(value.text)) namespaces.add(node.name.text);
    }
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      const target = ts.isPropertyAccessExpression(callee)
        ? [callee.expression, callee.name.text]
        : ts.isElementAccessExpression(callee) && ts.isStringLiteral(callee.argumentExpression)
          ? [callee.expression, callee.argumentExpression.text]
          : undefined;
      if (
        target &&
        ts.isIdentifier(unwrap(target[0] as ts.Expression)) &&
        namespaces.has((unwrap(target[0] as ts.Expression) as ts.Identifier).text) &&
        OWNED.has(target[1] as string)
      )
        found.push(`${at(node)}: calls ${target[1] as string}`);
      const loader = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      const loads =
        node.expression.kind === ts.SyntaxKind.ImportKeyword || loader === 'require' || loader === 'getBuiltinModule';
      if (loads && isCryptoModule(node.arguments[0])) found.push(`${at(node)}: loads node:crypto at run time`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('node:crypto signature, cipher, agreement and RSA-encryption calls live in src/jose only', () => {
  it('finds each form of use in a sample (the scan works)', () => {
    const sample = [
      "import { sign, createHash } from 'node:crypto';",
      "import * as c from 'crypto';",
      "import { privateDecrypt as pd } from 'node:crypto';",
      'const alias = c as typeof c;',
      "alias.createDecipheriv('aes-128-gcm', k, iv);",
      "c['publicEncrypt'](k, d);",
      "const x = require('node:crypto');",
      'if (typeof c.verify !== "function") {}',
    ].join('\n');
    expect(ownedCryptoUses(sample)).toEqual([
      '1: imports sign',
      '3: imports privateDecrypt',
      '5: calls createDecipheriv',
      '6: calls publicEncrypt',
      '7: loads node:crypto at run time',
    ]);
  });

  it('finds them in src/jose (where they belong), so the scan is not vacuous', () => {
    const uses = sourceFiles(join(SRC, 'jose')).flatMap((f) => ownedCryptoUses(readFileSync(f, 'utf8'), f));
    expect(uses.length).toBeGreaterThan(5);
  });

  it('finds none in src/ outside src/jose and src/provider', () => {
    const offending = sourceFiles(SRC)
      .filter((f) => !ALLOWED.some((dir) => f.startsWith(`${dir}/`)))
      .flatMap((f) => ownedCryptoUses(readFileSync(f, 'utf8'), f).map((use) => `${relative(SRC, f)}:${use}`));
    expect(offending).toEqual([]);
  });
});
