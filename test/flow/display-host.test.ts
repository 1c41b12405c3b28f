import { describe, expect, it } from 'vitest';
import { displayHost, MAX_DISPLAY_HOST_LENGTH, wellFormedHost } from '../../src/flow/display-host.js';

describe('displayHost', () => {
  it.each([
    'app.example',
    'localhost:3000',
    '127.0.0.1:65535',
    'a-b.c-d.example.',
    '[::1]:3000',
    '[2001:db8::1]',
    `${'a'.repeat(63)}.example`,
  ])('shows the well-formed host %s as it is', (host) => {
    expect(displayHost(host)).toBe(host);
  });

  it.each([
    '',
    `${'a'.repeat(40)}!`,
    `www.${'a'.repeat(26)}_.example.com`,
    `${'a'.repeat(40)}:123456`,
    `${'a'.repeat(64)}.example`,
    'a..b',
    '.a',
    'app.example:',
    '[::1',
    '<script>.example',
    `${'a.'.repeat(MAX_DISPLAY_HOST_LENGTH)}`,
  ])('replaces %s with a placeholder', (host) => {
    expect(displayHost(host)).toBe('an unrecognised host');
    expect(wellFormedHost(host)).toBeUndefined();
  });
});
