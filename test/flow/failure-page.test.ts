import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/html.js';
import { renderFailurePage } from '../../src/flow/failure-page.js';

describe('failure page', () => {
  it('shows the message escaped, so markup in it is shown as text', () => {
    const html = renderFailurePage({
      status: 401,
      title: 'Sign-in failed',
      message: '<script>alert("x")</script> & \'more\'',
      retryHref: '/auth/login',
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;');
  });

  it('offers a "Try again" link to the login route', () => {
    const html = renderFailurePage({ status: 403, title: 't', message: 'm', retryHref: '/auth/login' });
    expect(html).toContain('<a class="primary" href="/auth/login">Try again</a>');
  });

  it('always offers a way home, and no "Try again" when no retry link is given', () => {
    const html = renderFailurePage({ status: 403, title: 't', message: 'm' });
    expect(html).toContain('<a href="/">Go to the home page</a>');
    expect(html).not.toContain('Try again');
    expect(renderFailurePage({ status: 403, title: 't', message: 'm', homeHref: '/start' })).toContain(
      '<a href="/start">',
    );
  });

  it('puts the content in a main landmark and shows the reference id', () => {
    const html = renderFailurePage({ status: 500, title: 't', message: 'm', reference: 'R7F3K2QX' });
    expect(html).toMatch(/<main>[\s\S]*<h1>t<\/h1>[\s\S]*<\/main>/);
    expect(html).toContain('quote reference <code>R7F3K2QX</code>');
  });

  it('shows the developer box only when a diagnosis is given, escaped', () => {
    expect(renderFailurePage({ status: 403, title: 't', message: 'm' })).not.toContain('For the developer');
    const html = renderFailurePage({
      status: 403,
      title: 't',
      message: 'm',
      developer: { code: 'host_mismatch', cause: 'started on <localhost>', fix: 'use one host' },
    });
    expect(html).toContain('For the developer');
    expect(html).toContain('started on &lt;localhost&gt;');
  });

  it('escapes all five HTML-special characters', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
