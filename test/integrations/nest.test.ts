/**
 * NdIdStrategy in a real NestJS 11 app: `PassportStrategy(NdIdStrategy, 'nd-id')`, an
 * `AuthGuard('nd-id')` subclass on the login and callback routes, express-session, against the
 * provider over loopback. Decorators are applied with `Reflect.decorate` (the same calls the
 * `@Controller()`/`@Get()` syntax compiles to), so the test needs no decorator compiler options.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import {
  Catch,
  Controller,
  Get,
  Module,
  Req,
  Res,
  UseGuards,
  type ArgumentsHost,
  type ExecutionContext,
  type ExceptionFilter,
} from '@nestjs/common';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NdIdLoginFailure, ndIdGuardResult, ndIdLogIn } from '../../src/adapters/nest.js';
import { ndIdSignInGuard } from '../../src/adapters/nest-guard.js';
import { NdIdStrategy, type NdIdDefaultUser } from '../../src/passport/strategy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  closeServer,
  expectFailurePage,
  listenOnLoopback,
  PERSONA,
  recordingLogger,
  RP_KEYS,
  startIntegrationProvider,
  itKeepsTheSharedGuarantees,
  me,
  startLogin,
} from '../helpers/harness.js';
import { decorateMethod, startNestApp } from './nest-support.js';

interface NestRp {
  baseUrl: string;
  provider: StartedProvider;
  tokenCalls: () => number;
  log: () => string;
  close(): Promise<void>;
}

async function startNestRp(): Promise<NestRp> {
  const recorded = recordingLogger();
  const expressApp = express();
  const server: Server = createServer(expressApp);
  const baseUrl = await listenOnLoopback(server);
  const { provider, tokenCalls } = await startIntegrationProvider(`${baseUrl}/auth/callback`);

  class NdIdAuthStrategy extends PassportStrategy(NdIdStrategy, 'nd-id') {
    constructor() {
      super({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: RP_KEYS.privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL: `${baseUrl}/auth/callback`,
        scope: 'openid profile.name profile.nric_number',
        logger: recorded.logger,
      });
    }
    validate(user: NdIdDefaultUser): NdIdDefaultUser {
      return { sub: user.sub, data: user.data };
    }
  }
  const strategy = new NdIdAuthStrategy();

  class NdIdGuard extends AuthGuard('nd-id') {
    override getAuthenticateOptions(context: ExecutionContext): { returnTo?: string } {
      const { returnTo } = context.switchToHttp().getRequest<Request>().query;
      return typeof returnTo === 'string' ? { returnTo } : {};
    }
    override handleRequest<U>(err: unknown, user: U, info: unknown, _context: ExecutionContext, status?: number): U {
      return ndIdGuardResult(err, user, info, status, { retryHref: '/auth/login' });
    }
  }

  class NdIdFailureFilter implements ExceptionFilter {
    catch(failure: NdIdLoginFailure, host: ArgumentsHost): void {
      host
        .switchToHttp()
        .getResponse<Response>()
        .status(failure.status)
        .set('cache-control', 'no-store')
        .type('html')
        .send(failure.page);
    }
  }
  Reflect.decorate([Catch(NdIdLoginFailure)], NdIdFailureFilter);

  class AuthController {
    login(): void {
      // The guard has redirected to the service.
    }
    async callback(req: Request, res: Response): Promise<void> {
      await ndIdLogIn(req, req.user, strategy);
      res.redirect((req.authInfo as { returnTo?: string } | undefined)?.returnTo ?? '/');
    }
    logout(req: Request, res: Response): void {
      req.logout(() => res.redirect('/'));
    }
    me(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
    mark(req: Request): { ok: boolean } {
      (req.session as unknown as Record<string, unknown>).marker = 'before-login';
      return { ok: true };
    }
    marker(req: Request): { marker: unknown } {
      return { marker: (req.session as unknown as Record<string, unknown>).marker ?? null };
    }
    account(req: Request): { signedInAt: number | undefined } {
      return { signedInAt: req.signIn?.signedInAt };
    }
  }
  const proto = AuthController.prototype;
  decorateMethod(proto, 'login', [Get('auth/login'), UseGuards(NdIdGuard)]);
  Req()(proto, 'callback', 0);
  Res()(proto, 'callback', 1);
  decorateMethod(proto, 'callback', [Get('auth/callback'), UseGuards(NdIdGuard)]);
  Req()(proto, 'logout', 0);
  Res()(proto, 'logout', 1);
  decorateMethod(proto, 'logout', [Get('auth/logout')]);
  Req()(proto, 'me', 0);
  decorateMethod(proto, 'me', [Get('me')]);
  Req()(proto, 'mark', 0);
  decorateMethod(proto, 'mark', [Get('mark')]);
  Req()(proto, 'marker', 0);
  decorateMethod(proto, 'marker', [Get('marker')]);
  Req()(proto, 'account', 0);
  decorateMethod(proto, 'account', [Get('account'), UseGuards(ndIdSignInGuard())]);
  Reflect.decorate([Controller()], AuthController);

  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [PassportModule.register({ session: true, keepSessionInfo: true })],
        controllers: [AuthController],
        providers: [{ provide: NdIdAuthStrategy, useValue: strategy }],
      }),
    ],
    AppModule,
  );

  const app = await startNestApp(AppModule, expressApp, 'nest-session-secret-0123456789', (nest) =>
    nest.useGlobalFilters(new NdIdFailureFilter()),
  );

  return {
    baseUrl,
    provider,
    tokenCalls,
    log: recorded.text,
    close: async () => {
      await provider.close();
      await app.close();
      await closeServer(server);
    },
  };
}

describe('NestJS with @nestjs/passport and express-session', () => {
  let rp: NestRp;
  beforeAll(async () => {
    rp = await startNestRp();
  });
  afterAll(async () => {
    await rp.close();
  });

  itKeepsTheSharedGuarantees(
    () => rp,
    async () => new Browser(rp.baseUrl),
  );

  it('signs a person in end to end, returning to the same-site returnTo', async () => {
    const browser = new Browser(rp.baseUrl);
    const done = await browser.get((await approve(await startLogin(browser, '/auth/login?returnTo=%2Faccount'))).href);
    expect(done.status).toBe(302);
    expect(done.location).toBe('/account');
    expect((await me(browser))?.data['profile.name']).toBe(PERSONA['profile.name']);
  });

  it('starts a fresh session at sign-in: a new id, and data from before the login is gone', async () => {
    const browser = new Browser(rp.baseUrl);
    await browser.get('/mark');
    const callback = await approve(await startLogin(browser, '/auth/login'));
    const before = browser.jar.get('connect.sid');
    expect((await browser.get(callback.href)).status).toBe(302);
    expect(browser.jar.get('connect.sid')).not.toBe(before);
    expect(JSON.parse((await browser.get('/marker')).text)).toEqual({ marker: null });
    expect(await me(browser)).not.toBeNull();
  });

  it('ends a cancelled sign-in on a 401 page with the strategy’s sentence', async () => {
    const browser = new Browser(rp.baseUrl);
    const authorize = await startLogin(browser, '/auth/login');
    const state = authorize.searchParams.get('state') ?? '';
    const iss = encodeURIComponent(`${authorize.origin}/v2`);
    expectFailurePage(
      await browser.get(`/auth/callback?error=access_denied&state=${state}&iss=${iss}`),
      401,
      /cancelled or refused/,
    );
  });

  it('guards a route with ndIdSignInGuard: a stranger is sent to sign in with returnTo, a signed-in person passes', async () => {
    const browser = new Browser(rp.baseUrl);
    const refused = await browser.get('/account');
    expect(refused.status).toBe(303);
    expect(refused.location).toBe('/auth/login?returnTo=%2Faccount');
    await browser.get((await approve(await startLogin(browser, '/auth/login'))).href);
    const passed = await browser.get('/account');
    expect(passed.status).toBe(200);
    expect(JSON.parse(passed.text)).toEqual({ signedInAt: expect.any(Number) });
    // The person's page (and any refreshed session cookie with it) is kept by no cache.
    expect(passed.cacheControl).toBe('no-store');
  });

  it('answers a callback with an unknown state with the 403 failure page, not Nest’s generic 401', async () => {
    const browser = new Browser(rp.baseUrl);
    const page = await browser.get('/auth/callback?code=some-code&state=a-state-this-app-never-issued-0000');
    expectFailurePage(page, 403, /not started in this browser/);
    expect(page.text).toContain('href="/auth/login"');
    expect(page.text).not.toContain('Unauthorized');
  });

  it('signs out', async () => {
    const browser = new Browser(rp.baseUrl);
    await browser.get((await approve(await startLogin(browser, '/auth/login'))).href);
    expect(await me(browser)).not.toBeNull();
    expect((await browser.get('/auth/logout')).status).toBe(302);
    expect(await me(browser)).toBeNull();
  });
});
