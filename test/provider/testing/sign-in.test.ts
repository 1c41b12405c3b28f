/**
 * The test kit's signIn over real HTTP: through an Express app's own routes, with the provider
 * driven by approveNext or auto-approving (persona as login_hint), and its cookie jar's rules.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import { ndIdRouter } from '../../../src/passport/router.js';
import { NdIdStrategy } from '../../../src/passport/strategy.js';
import {
  CookieJar,
  createTestProvider,
  signIn,
  SignInError,
  type TestProvider,
  type TestProviderOptions,
} from '../../../src/provider/index.js';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

async function listen(handler?: express.Express): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** An Express app with the router, and the provider it signs in against. */
async function appAndProvider(
  options: TestProviderOptions = {},
  before?: (app: express.Express) => void,
): Promise<{ base: string; kit: TestProvider }> {
  const { server, base } = await listen();
  const kit = await createTestProvider({ ...options, redirectUri: `${base}/auth/callback` });
  open.push(() => kit.close());
  const authenticator = new passport.Passport();
  authenticator.use(
    new NdIdStrategy({
      ...kit.client,
      hostname: kit.baseUrl,
      callbackURL: kit.client.redirectUri,
      scope: 'openid profile.name',
    }),
  );
  authenticator.serializeUser((u, done) => done(null, u));
  authenticator.deserializeUser((u: Express.User, done) => done(null, u));
  const app = express();
  before?.(app);
  app.use(session({ secret: 'sign-in-test', resave: false, saveUninitialized: false }));
  app.use(authenticator.session());
  app.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/me' }));
  app.get('/me', (req, res) => {
    const user = req.user as { data?: Record<string, string> } | undefined;
    if (user) res.json({ name: user.data?.['profile.name'] });
    else res.status(401).json({ error: 'not signed in' });
  });
  server.on('request', app);
  return { base, kit };
}

describe('signIn', () => {
  it('the test-kit guide shows the recipe exactly as test/provider/testing/sign-in-recipe.test.ts runs it', () => {
    const guide = readFileSync(join(process.cwd(), 'docs', 'test-kit.md'), 'utf8');
    const recipe = readFileSync(join(process.cwd(), 'test', 'provider', 'testing', 'sign-in-recipe.test.ts'), 'utf8');
    const block = /<!-- recipe: sign-in -->\n```ts\n([\s\S]*?)```\n/.exec(guide)?.[1];
    expect(block).toBe(recipe);
  });

  it('with an auto-approving provider and no provider object, signs in as the persona (sent as login_hint)', async () => {
    const { base } = await appAndProvider({ autoApprove: true });
    const result = await signIn(base, { persona: 'chandra' });
    expect(result.redirects.some((u) => new URL(u).searchParams.get('login_hint') === 'chandra')).toBe(true);
    expect(await result.response.json()).toEqual({ name: 'Chandra Fictional' });
    expect(result.cookies.map((c) => c.name)).toEqual(['connect.sid']);
    expect(result.cookies[0]).toMatchObject({ httpOnly: true, path: '/', hostOnly: true, domain: '127.0.0.1' });
    const again = await fetch(`${base}/me`, { headers: { cookie: result.cookieHeader } });
    expect(again.status).toBe(200);
  });

  it('queues the login with approveNext: persona and attribute values of this one login', async () => {
    const { base, kit } = await appAndProvider();
    const result = await signIn(base, {
      provider: kit.provider,
      persona: 'eko',
      data: { 'profile.name': 'Someone Else' },
    });
    expect(await result.response.json()).toEqual({ name: 'Someone Else' });
  });

  it('says what to do when the provider shows its QR page', async () => {
    const { base } = await appAndProvider();
    await expect(signIn(base, { persona: 'ben' })).rejects.toThrow(/showed its QR page\. Pass `provider`.*autoApprove/);
  });

  it('refuses options that need a provider, and a bad base URL', async () => {
    await expect(signIn('http://127.0.0.1:1', { deny: true })).rejects.toThrow(TypeError);
    await expect(signIn('not a url')).rejects.toThrow(/appBaseUrl must be an absolute URL/);
    await expect(signIn('http://127.0.0.1:1', { loginPath: 'auth/login' })).rejects.toThrow(/loginPath/);
  });

  it('stops a redirect loop after maxRedirects, naming it', async () => {
    const app = express();
    app.get('/auth/login', (_req, res) => res.redirect('/again'));
    app.get('/again', (_req, res) => res.redirect('/auth/login'));
    const { base } = await listen(app);
    await expect(signIn(base, { maxRedirects: 3 })).rejects.toThrow(/more than 3 redirects.*loop/);
  });
});

describe('CookieJar', () => {
  it('keeps cookies per path and host, drops expired ones and ignores foreign domains', () => {
    let now = 1_000_000;
    const jar = new CookieJar(() => now);
    jar.store('http://127.0.0.1:3000/auth/callback', [
      'sid=s1; Path=/; HttpOnly; SameSite=Lax',
      'pending=p1', // default path: /auth
      'other=o1; Domain=example.test',
      'ip=i1; Domain=127.0.0.1; Path=/',
      'short=x; Max-Age=10; Path=/',
      'sec=y; Secure; Path=/',
    ]);
    expect(jar.header('http://127.0.0.1:4000/auth/login')).toBe('pending=p1; sid=s1; ip=i1; short=x; sec=y');
    expect(jar.header('http://127.0.0.1:3000/me')).toBe('sid=s1; ip=i1; short=x; sec=y');
    expect(jar.header('http://localhost:3000/me')).toBe('');
    now += 11_000;
    expect(jar.header('http://127.0.0.1:3000/me')).toBe('sid=s1; ip=i1; sec=y');
    jar.store('http://127.0.0.1:3000/auth/logout', ['sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT']);
    expect(jar.header('http://127.0.0.1:3000/me')).toBe('ip=i1; sec=y');
  });

  it('sends Secure cookies over https and to loopback, not over plain http elsewhere; a parent Domain covers subdomains', () => {
    const jar = new CookieJar();
    jar.store('https://app.example.test/', ['sec=1; Secure; Domain=example.test; Path=/']);
    expect(jar.header('https://www.example.test/')).toBe('sec=1');
    expect(jar.header('http://app.example.test/')).toBe('');
    jar.store('http://localhost:3000/', ['lsec=2; Secure']);
    expect(jar.header('http://localhost:3000/')).toBe('lsec=2');
  });

  it("sends a browser navigation's headers, so an app that refuses scripts' requests (as mod_auth_openidc does) signs the person in", async () => {
    const seen: Array<Record<string, string | undefined>> = [];
    const { base, kit } = await appAndProvider({}, (app) => {
      // A relying party that starts a login only for a top-level page load, as mod_auth_openidc does.
      app.use('/auth', (req, res, next) => {
        const h = req.headers;
        seen.push({
          path: req.path,
          mode: h['sec-fetch-mode'] as string,
          dest: h['sec-fetch-dest'] as string,
          site: h['sec-fetch-site'] as string,
          accept: h.accept,
        });
        if (h['sec-fetch-mode'] !== 'navigate' || h['sec-fetch-dest'] !== 'document') res.status(401).end();
        else next();
      });
    });
    const result = await signIn(base, { provider: kit, persona: 'ben' });
    expect(await result.response.json()).toEqual({ name: 'Ben Samplename' });
    expect(seen.map((s) => [s.path, s.mode, s.dest, s.site])).toEqual([
      ['/login', 'navigate', 'document', 'same-origin'],
      // Back from the provider (another port of the same host): the chain is same-site.
      ['/callback', 'navigate', 'document', 'same-site'],
    ]);
    expect(seen[0]!.accept).toMatch(/^text\/html,/);
  });

  it('fails with a SignInError naming the status and path when the app answers the sign-in with a 401', async () => {
    const { base, kit } = await appAndProvider({}, (app) => {
      app.get('/auth/callback', (_req, res) => res.status(401).send('Unauthorized'));
    });
    const failed = signIn(base, { provider: kit });
    await expect(failed).rejects.toThrow(SignInError);
    await expect(failed).rejects.toThrow(
      /ended with 401 at http:\/\/127\.0\.0\.1:\d+\/auth\/callback, not a page of the signed-in app/,
    );
    const error = (await failed.catch((e: unknown) => e)) as SignInError;
    expect(error.response.status).toBe(401);
    expect(error.message).not.toMatch(/code=|state=/);
  });

  it('fails when the app never sends the browser to the provider, or the provider refuses the request', async () => {
    const app = express();
    app.get('/auth/login', (_req, res) => res.send('<p>Welcome</p>'));
    app.get('/bad/login', (_req, res) => res.redirect(`${kit.baseUrl}/v2/oauth/authorize?client_id=nobody`));
    const { base } = await listen(app);
    const kit = await createTestProvider({ redirectUri: `${base}/auth/callback` });
    open.push(() => kit.close());
    await expect(signIn(base, { provider: kit })).rejects.toThrow(
      /answered 200 at http:\/\/127\.0\.0\.1:\d+\/auth\/login without sending the browser to the provider/,
    );
    await expect(signIn(base, { provider: kit, loginPath: '/bad/login' })).rejects.toThrow(
      /the provider refused the authorization request \(400 at/,
    );
  });

  it('with deny, a decline page in 4xx is the expected ending', async () => {
    const { base, kit } = await appAndProvider({}, (app) => {
      app.get('/auth/callback', (req, res, next) =>
        req.query['error'] === 'access_denied' ? res.status(403).send('You declined') : next(),
      );
    });
    const declined = await signIn(base, { provider: kit, deny: true });
    expect(declined.response.status).toBe(403);
  });
});
