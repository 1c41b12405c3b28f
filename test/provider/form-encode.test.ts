import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formEncode } from '../../src/provider/http/form-encode.js';

describe('formEncode', () => {
  it('writes what URLSearchParams writes, for any string (lone surrogates included)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary-ascii' }), fc.string()), (value) => {
        expect(formEncode(value)).toBe(new URLSearchParams({ v: value }).toString().slice(2));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps only letters, digits and *-._, writes a space as +, and everything else as %XX', () => {
    expect(formEncode("a Z0*-._!'()~+&=/?#%\u00e9\ud800")).toBe('a+Z0*-._%21%27%28%29%7E%2B%26%3D%2F%3F%23%25%C3%A9%EF%BF%BD');
  });
});
