/**
 * The NestJS app of the adapter conformance suite: `AuthGuard('nd-id')` with `ndIdGuardResult`,
 * `ndIdLogIn` on the callback and `ndIdSignInGuard` on the guarded routes, on Express with
 * express-session, with the routes of test/sessions/harness.ts. Not a test file itself.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Post, Req, Res, UseGuards, type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import express, { type Request, type Response } from 'express';
import { ndIdGuardResult, ndIdLogIn, NdIdLoginFailure } from '../../src/adapters/nest.js';
import { ndIdSignInGuard } from '../../src/adapters/nest-guard.js';
import { ndIdBackchannelLogout } from '../../src/adapters/nest-backchannel.js';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { stepUpMaxAge } from '../../src/flow/access.js';
import { safeReturnTo } from '../../src/flow/return-to.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { NdIdStrategy, type NdIdDefaultUser, type NdIdSuccessInfo } from '../../src/passport/strategy.js';
import { testKeyPair } from '../helpers/keys.js';
import { decorateMethod, startNestApp } from '../integrations/nest-support.js';
import { CLIENT_ID, CLIENT_SECRET, startTestProvider, type TestApp, type TestAppOptions } from '../sessions/harness.js';

/** Options of the Nest app: those of every test app, and whether Nest's body parsers run (default true). */
export interface NestAppOptions extends TestAppOptions {
  bodyParser?: boolean;
}

/**
 * Starts the Nest app: `/auth/login`, `/auth/callback`, `POST /auth/backchannel-logout`,
 * `/account`, `/api/me`, `/transfer` (300 s).
 */
export async function startNestConformanceApp(options: NestAppOptions = {}): Promise<TestApp> {
  const expressApp = express();
  const server: Server = createServer(expressApp);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = options.provider ?? (await startTestProvider([`${baseUrl}/auth/callback`], options.signingKey));
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...options.policy, clock });

  class NdIdAuthStrategy extends PassportStrategy(NdIdStrategy, 'nd-id') {
    constructor() {
      super({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: testKeyPair('sessions').privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL: `${baseUrl}/auth/callback`,
        clock,
        sessions,
      });
    }
    validate(user: NdIdDefaultUser): NdIdDefaultUser {
      return user;
    }
  }
  const strategy = new NdIdAuthStrategy();
  const backchannelLogout = createBackchannelLogout({
    client: strategy,
    sessions,
    replayStore: options.replayStore ?? createMemoryReplayStore(),
  });
  class NdIdGuard extends AuthGuard('nd-id') {
    override getAuthenticateOptions(context: ExecutionContext): object {
      const req = context.switchToHttp().getRequest<Request>();
      const returnTo = safeReturnTo(req.query.returnTo);
      const maxAge = stepUpMaxAge(req.query.maxAge);
      return { ...(returnTo === undefined ? {} : { returnTo }), ...(maxAge === undefined ? {} : { maxAge }) };
    }
    override handleRequest<U>(err: unknown, user: U, info: unknown, _context: ExecutionContext, status?: number): U {
      return ndIdGuardResult(err, user, info, status);
    }
  }
  class AccountController {
    login(): void {
      // The guard has redirected to the service.
    }
    async callback(req: Request, res: Response): Promise<void> {
      try {
        await ndIdLogIn(req, req.user, strategy, sessions);
      } catch (err) {
        if (!(err instanceof NdIdLoginFailure)) throw err;
        res.status(err.status).set('Cache-Control', 'no-store').type('html').send(err.page);
        return;
      }
      res.redirect(safeReturnTo((req.authInfo as NdIdSuccessInfo | undefined)?.returnTo) ?? '/');
    }
    backchannelLogout(req: Request, res: Response): Promise<void> {
      return ndIdBackchannelLogout(req, res, backchannelLogout);
    }
    account(req: Request): { user: unknown; signIn: unknown } {
      return { user: req.user ?? null, signIn: req.signIn };
    }
    api(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
    transfer(): string {
      return 'transfer form';
    }
  }
  const proto = AccountController.prototype;
  decorateMethod(proto, 'login', [Get('auth/login'), UseGuards(NdIdGuard)]);
  Req()(proto, 'callback', 0);
  Res()(proto, 'callback', 1);
  decorateMethod(proto, 'callback', [Get('auth/callback'), UseGuards(NdIdGuard)]);
  Req()(proto, 'backchannelLogout', 0);
  Res()(proto, 'backchannelLogout', 1);
  decorateMethod(proto, 'backchannelLogout', [Post('auth/backchannel-logout')]);
  Req()(proto, 'account', 0);
  decorateMethod(proto, 'account', [Get('account'), UseGuards(ndIdSignInGuard({ sessions }))]);
  Req()(proto, 'api', 0);
  decorateMethod(proto, 'api', [Get('api/me'), UseGuards(ndIdSignInGuard({ sessions, api: true }))]);
  decorateMethod(proto, 'transfer', [Get('transfer'), UseGuards(ndIdSignInGuard({ sessions, recentSeconds: 300 }))]);
  Reflect.decorate([Controller()], AccountController);
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [PassportModule.register({ session: true, keepSessionInfo: true })],
        controllers: [AccountController],
        providers: [{ provide: NdIdAuthStrategy, useValue: strategy }],
      }),
    ],
    AppModule,
  );
  const app = await startNestApp(
    AppModule,
    expressApp,
    'nest-sessions-secret-0123456789',
    undefined,
    options.bodyParser ?? true,
  );
  return {
    baseUrl,
    provider,
    sessions,
    close: async () => {
      await app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (options.provider === undefined) await provider.close();
    },
  };
}
