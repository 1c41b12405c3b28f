import { describe, expect, it } from 'vitest';
import { MAX_RETURN_TO_LENGTH, safeReturnTo } from '../../src/flow/return-to.js';

describe('safeReturnTo', () => {
  it.each(['/', '/account', '/account/settings?tab=privacy&x=1#top', '/a:b', '/caf%C3%A9'])(
    'keeps the same-site path %s',
    (path) => {
      expect(safeReturnTo(path)).toBe(path);
    },
  );

  it.each([
    ['protocol-relative URL', '//evil.example/phish'],
    ['protocol-relative URL with three slashes', '///evil.example'],
    ['double slash later in the path', '/ok//evil.example'],
    ['slash backslash', '/\\evil.example'],
    ['backslash slash', '\\/evil.example'],
    ['any backslash', '/a\\b'],
    ['absolute https URL', 'https://evil.example/'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['data scheme', 'data:text/html,<script>alert(1)</script>'],
    ['relative path without leading slash', 'account'],
    ['tab that browsers strip', '/\t/evil.example'],
    ['newline', '/account\nSet-Cookie: a=b'],
    ['carriage return', '/account\r'],
    ['NUL', '/account\u0000'],
    ['DEL', '/account\u007f'],
    ['C1 control', '/account\u0085'],
    ['percent-encoded slash', '/%2F%2Fevil.example'],
    ['percent-encoded backslash', '/%5cevil.example'],
    ['percent-encoded newline', '/account%0d%0aSet-Cookie:a=b'],
    ['empty string', ''],
  ])('refuses a %s', (_name, value) => {
    expect(safeReturnTo(value)).toBeUndefined();
  });

  it('refuses a path longer than the limit and keeps one at the limit', () => {
    const atLimit = '/' + 'a'.repeat(MAX_RETURN_TO_LENGTH - 1);
    expect(safeReturnTo(atLimit)).toBe(atLimit);
    expect(safeReturnTo(atLimit + 'a')).toBeUndefined();
  });

  it.each([[undefined], [null], [42], [['/a', '/b']], [{ path: '/a' }]])('refuses the non-string %j', (value) => {
    expect(safeReturnTo(value)).toBeUndefined();
  });
});

describe('safeReturnTo percent-encodes what a Location header cannot carry', () => {
  it.each([
    ['/中文', '/%E4%B8%AD%E6%96%87'],
    ['/a b?x=é', '/a%20b?x=%C3%A9'],
    ['/already%20encoded', '/already%20encoded'],
    ['/account?tab=1#top', '/account?tab=1#top'],
  ])('%s becomes %s, and stays so when checked again', (input, output) => {
    expect(safeReturnTo(input)).toBe(output);
    expect(safeReturnTo(output)).toBe(output);
  });
});
