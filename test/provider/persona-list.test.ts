import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PERSONAS, nricCheckLetter, type Persona, type StartedProvider } from '../../src/provider/index.js';
import { MAX_LISTED_PERSONAS } from '../../src/provider/persona-search.js';
import { authorizeQuery, pkce, startTestProvider } from '../helpers/provider-fixtures.js';

/** `n` personas: the built-in ones, then "Person 1", "Person 2", … */
function manyPersonas(n: number): Persona[] {
  const out: Persona[] = [...DEFAULT_PERSONAS];
  for (let i = 1; out.length < n; i++) {
    const digits = String(2_000_000 + i);
    out.push({
      id: `p${i}`,
      'profile.name': `Person ${i}`,
      'profile.nric_number': `S${digits}${nricCheckLetter('S', digits)}`,
      'profile.passport_expiry_date': '2031-01-01',
    });
  }
  return out;
}

/** A new QR login's phone link and the number its page shows. */
async function phoneLink(started: StartedProvider): Promise<{ url: string; match: string }> {
  const html = await (await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge)}`)).text();
  return {
    url: /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '',
    match: /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '',
  };
}

function options(html: string): string[] {
  return [...html.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]!);
}

describe('the phone page with many personas', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ personas: manyPersonas(1000) });
  });
  afterAll(() => started.close());

  it(`lists the first ${MAX_LISTED_PERSONAS} and offers a search, whatever the number of personas`, async () => {
    const { url } = await phoneLink(started);
    const html = await (await fetch(url)).text();
    expect(options(html)).toEqual(started.provider.personas.slice(0, MAX_LISTED_PERSONAS).map((p) => p.id));
    expect(html).toContain('<form method="get"');
    expect(html).toContain(`Listing ${MAX_LISTED_PERSONAS} of 1000: search to narrow.`);
  });

  it('a search lists the personas whose name or id holds it, ignoring case, and approval takes one of them', async () => {
    const { url, match } = await phoneLink(started);
    const html = await (await fetch(`${url}?q=${encodeURIComponent('PERSON 12')}`)).text();
    expect(options(html)).toEqual([
      'p12',
      'p120',
      'p121',
      'p122',
      'p123',
      'p124',
      'p125',
      'p126',
      'p127',
      'p128',
      'p129',
    ]);
    expect(html).toContain('value="PERSON 12"');
    expect(html).toContain('Listing all 11.');
    const approve = await fetch(url, {
      method: 'POST',
      body: new URLSearchParams({ decision: 'approve', match, persona: 'p125' }),
    });
    expect(approve.status).toBe(200);
  });

  it('a search matching no one says so and lists no one; markup in it is escaped', async () => {
    const { url } = await phoneLink(started);
    const html = await (await fetch(`${url}?q=${encodeURIComponent('"><b>nobody')}`)).text();
    expect(options(html)).toEqual([]);
    expect(html).toContain('No person matches.');
    expect(html).toContain('value="&quot;&gt;&lt;b&gt;nobody"');
    expect(html).not.toContain('<b>nobody');
  });

  it('refuses a search longer than 64 characters or sent twice with invalid_request', async () => {
    const { url } = await phoneLink(started);
    const long = await fetch(`${url}?q=${'a'.repeat(65)}`);
    expect(long.status).toBe(400);
    expect(await long.text()).toContain('invalid_request');
    const twice = await fetch(`${url}?q=a&q=b`);
    expect(twice.status).toBe(400);
  });
});

describe('the phone page with the built-in personas', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider();
  });
  afterAll(() => started.close());

  it('lists them all, without a search', async () => {
    const { url } = await phoneLink(started);
    const html = await (await fetch(url)).text();
    expect(options(html)).toEqual(DEFAULT_PERSONAS.map((p) => p.id));
    expect(html).not.toContain('<form method="get"');
  });
});
