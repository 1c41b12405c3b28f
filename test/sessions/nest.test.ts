/**
 * The NestJS guard (`ndIdSignInGuard`) reads the signed-in person as the session policy says: in a
 * real Nest 11 app on Express, after `signOutEverywhere`, the idle timeout or `maxSessionAge`, a
 * copy of the session cookie gives the guarded route no user (303 to sign in, or 401
 * `session_ended` for an API), over real HTTP against the provider with its movable clock.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Req, Res, UseGuards, type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import express, { type Request, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { ndIdGuardResult, ndIdLogIn } from '../../src/adapters/nest.js';
import { ndIdSignInGuard } from '../../src/adapters/nest-guard.js';
import { createSessionPolicy, type SessionPolicy, type SessionPolicyOptions } from '../../src/flow/session-policy.js';
import { NdIdStrategy, type NdIdDefaultUser } from '../../src/passport/strategy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { decorateMethod, startNestApp } from '../integrations/nest-support.js';
import { Browser, CLIENT_ID, CLIENT_SECRET, MINUTE, startTestProvider } from './harness.js';

interface NestApp {
  baseUrl: string;
  provider: StartedProvider;
  sessions: SessionPolicy;
  close(): Promise<void>;
}

let current: NestApp | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

async function startNest(policy: Omit<SessionPolicyOptions, 'clock'> = {}): Promise<NestApp> {
  const expressApp = express();
  const server: Server = createServer(expressApp);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await startTestProvider([`${baseUrl}/auth/callback`]);
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...policy, clock });

  class NdIdAuthStrategy extends PassportStrategy(NdIdStrategy, 'nd-id') {
    constructor() {
      super({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: testKeyPair('sessions').privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL: `${baseUrl}/auth/callback`,
        clock,
      });
    }
    validate(user: NdIdDefaultUser): NdIdDefaultUser {
      return user;
    }
  }
  const strategy = new NdIdAuthStrategy();
  class NdIdGuard extends AuthGuard('nd-id') {
    override handleRequest<U>(err: unknown, user: U, info: unknown, _context: ExecutionContext, status?: number): U {
      return ndIdGuardResult(err, user, info, status);
    }
  }
  class AccountController {
    login(): void {
      // The guard has redirected to the service.
    }
    async callback(req: Request, res: Response): Promise<void> {
      await ndIdLogIn(req, req.user, strategy, sessions);
      res.redirect('/account');
    }
    account(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
    api(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
  }
  const proto = AccountController.prototype;
  decorateMethod(proto, 'login', [Get('auth/login'), UseGuards(NdIdGuard)]);
  Req()(proto, 'callback', 0);
  Res()(proto, 'callback', 1);
  decorateMethod(proto, 'callback', [Get('auth/callback'), UseGuards(NdIdGuard)]);
  Req()(proto, 'account', 0);
  decorateMethod(proto, 'account', [Get('account'), UseGuards(ndIdSignInGuard({ sessions }))]);
  Req()(proto, 'api', 0);
  decorateMethod(proto, 'api', [Get('api/me'), UseGuards(ndIdSignInGuard({ sessions, api: true }))]);
  Reflect.decorate([Controller()], AccountController);
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [PassportModule],
        controllers: [AccountController],
        providers: [{ provide: NdIdAuthStrategy, useValue: strategy }],
      }),
    ],
    AppModule,
  );
  const app = await startNestApp(AppModule, expressApp, 'nest-sessions-secret-0123456789');
  current = {
    baseUrl,
    provider,
    sessions,
    close: async () => {
      await app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.close();
    },
  };
  return current;
}

/** Signs a browser in, and returns the person's sub and a copy of its cookie header. */
async function signedIn(app: NestApp): Promise<{ sub: string; copy: string }> {
  const browser = new Browser(app.baseUrl);
  expect((await browser.signIn()).status).toBe(302);
  const copy = browser.cookieHeader();
  const res = await fetch(`${app.baseUrl}/account`, { headers: { cookie: copy } });
  expect(res.status).toBe(200);
  return { sub: ((await res.json()) as { user: { sub: string } }).user.sub, copy };
}

/** The guarded routes with the copied cookie: the page's status and the API's error. */
async function guarded(app: NestApp, copy: string): Promise<{ page: number; api: number; error: string | undefined }> {
  const page = await fetch(`${app.baseUrl}/account`, { headers: { cookie: copy }, redirect: 'manual' });
  const api = await fetch(`${app.baseUrl}/api/me`, { headers: { cookie: copy, accept: 'application/json' } });
  return { page: page.status, api: api.status, error: ((await api.json()) as { error?: string }).error };
}

describe('ndIdSignInGuard (NestJS) honours the session policy', () => {
  it('gives no user to a copy of the cookie once the person is signed out everywhere', async () => {
    const app = await startNest();
    const { sub, copy } = await signedIn(app);
    await app.sessions.signOutEverywhere(sub);
    const api = await fetch(`${app.baseUrl}/api/me`, { headers: { cookie: copy, accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toBe('session_ended');
    expect(await guarded(app, copy)).toMatchObject({ page: 303, api: 401 });
  });

  it('gives no user after the idle timeout', async () => {
    const app = await startNest({ idleTimeout: 30 * MINUTE });
    const { copy } = await signedIn(app);
    app.provider.provider.advanceClock(31 * MINUTE);
    const api = await fetch(`${app.baseUrl}/api/me`, { headers: { cookie: copy, accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toBe('session_ended');
    expect((await guarded(app, copy)).page).toBe(303);
  });

  it('gives no user after maxSessionAge', async () => {
    const app = await startNest({ maxSessionAge: 60 * MINUTE, idleTimeout: false });
    const { copy } = await signedIn(app);
    app.provider.provider.advanceClock(59 * MINUTE);
    expect((await guarded(app, copy)).page).toBe(200);
    app.provider.provider.advanceClock(2 * MINUTE);
    expect(await guarded(app, copy)).toMatchObject({ page: 303, api: 401 });
  });
});
