import { describe, expect, it } from 'vitest';
import { formatDate, homePage, maskNric, profilePage } from '../../example-app/views.js';

describe('example app views', () => {
  it.each([
    ['S1234567D', 'S****567D'],
    ['T0123456G', 'T****456G'],
    ['AB12', '****'],
  ])('the identity number %s is shown as %s', (nric, shown) => {
    expect(maskNric(nric)).toBe(shown);
  });

  it('the passport expiry date reads as a date, e.g. 17 May 2031', () => {
    expect(formatDate('2031-05-17')).toBe('17 May 2031');
    expect(formatDate('not a date')).toBe('not a date');
  });

  it('the profile page shows the attributes escaped, the number masked, and a Log out button that posts', () => {
    const html = profilePage({
      sub: 'pairwise-sub',
      data: {
        'profile.name': '<script>alert(1)</script>',
        'profile.nric_number': 'S1234567D',
        'profile.passport_expiry_date': '2031-05-17',
      },
    });
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('S****567D');
    expect(html).not.toContain('S1234567D');
    expect(html).toContain('<time data-field="passport-expiry" datetime="2031-05-17">17 May 2031</time>');
    expect(html).toContain('<code data-field="sub">pairwise-sub</code>');
    expect(html).toMatch(/<form method="post" action="\/auth\/logout"><button[^>]*>Log out<\/button><\/form>/);
  });

  it('an attribute the person did not share is shown as a dash', () => {
    const html = profilePage({ sub: 's', data: { 'profile.name': 'Ada' } });
    expect(html).toContain('<dt>Identity number</dt><dd><span aria-label="not shared">—</span></dd>');
  });

  it('the home page greets a signed-in person and offers Log out instead of Log in', () => {
    const html = homePage({ sub: 's', data: { 'profile.name': 'Ada Testperson' } });
    expect(html).toContain('Welcome back, Ada Testperson');
    expect(html).not.toContain('>Log in<');
    expect(html).toContain('>Log out</button>');
  });
});
