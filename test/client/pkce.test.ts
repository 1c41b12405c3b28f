import { describe, expect, it } from 'vitest';
import {
  generateCodeChallenge,
  generateCodeVerifier,
  generateNonce,
  generatePkcePair,
  generateState,
  isPkceString,
} from '../../src/pkce.js';

const UNRESERVED = /^[A-Za-z0-9\-._~]+$/;

describe('generateCodeVerifier', () => {
  it('defaults to 43 characters of the unreserved charset', () => {
    const v = generateCodeVerifier();
    expect(v).toHaveLength(43);
    expect(v).toMatch(UNRESERVED);
  });

  it.each([43, 44, 64, 100, 127, 128])('gives exactly %i characters when asked', (n) => {
    const v = generateCodeVerifier(n);
    expect(v).toHaveLength(n);
    expect(v).toMatch(UNRESERVED);
  });

  it.each([42, 129, 0, -43, 43.5, Number.NaN, Number.POSITIVE_INFINITY])('throws for length %s', (n) => {
    expect(() => generateCodeVerifier(n)).toThrow(RangeError);
    expect(() => generateCodeVerifier(n)).toThrow(/43 to 128/);
  });

  it('throws for a length that is not a number', () => {
    expect(() => generateCodeVerifier('50' as unknown as number)).toThrow(RangeError);
  });

  it('never repeats itself (CSPRNG output)', () => {
    const seen = new Set(Array.from({ length: 200 }, () => generateCodeVerifier()));
    expect(seen.size).toBe(200);
  });
});

describe('generateCodeChallenge', () => {
  it('matches the RFC 7636 appendix B test vector', () => {
    expect(generateCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('produces 43 base64url characters', () => {
    const c = generateCodeChallenge(generateCodeVerifier(128));
    expect(c).toHaveLength(43);
    expect(c).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ['too short', 'a'.repeat(42)],
    ['too long', 'a'.repeat(129)],
    ['outside the charset', 'a'.repeat(42) + '+'],
    ['with a space', 'a'.repeat(42) + ' '],
    ['with non-ASCII', 'a'.repeat(42) + 'é'],
  ])('throws for a verifier %s', (_why, verifier) => {
    expect(() => generateCodeChallenge(verifier)).toThrow(TypeError);
  });

  it('throws for a non-string verifier', () => {
    expect(() => generateCodeChallenge(undefined as unknown as string)).toThrow(TypeError);
  });
});

describe('generatePkcePair', () => {
  it('returns a verifier and its S256 challenge', () => {
    const { codeVerifier, codeChallenge } = generatePkcePair(60);
    expect(codeVerifier).toHaveLength(60);
    expect(codeChallenge).toBe(generateCodeChallenge(codeVerifier));
    expect(isPkceString(codeChallenge)).toBe(true);
  });

  it('rejects the same lengths as generateCodeVerifier', () => {
    expect(() => generatePkcePair(42)).toThrow(RangeError);
    expect(() => generatePkcePair(129)).toThrow(RangeError);
    expect(() => generatePkcePair(50.5)).toThrow(RangeError);
  });
});

describe('state and nonce', () => {
  it('carry at least 128 random bits each and differ every time', () => {
    for (const gen of [generateState, generateNonce]) {
      const a = gen();
      const b = gen();
      expect(a).not.toBe(b);
      expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(a, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    }
  });
});
