import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/html.js';
import { renderFailurePage } from '../../src/passport/failure-page.js';

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
    expect(html).toContain('<a href="/auth/login">Try again</a>');
  });

  it('has no link when none is given', () => {
    expect(renderFailurePage({ status: 403, title: 't', message: 'm' })).not.toContain('<a ');
  });

  it('escapes all five HTML-special characters', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
