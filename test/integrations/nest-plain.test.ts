/**
 * NdIdStrategy behind the plain `AuthGuard('nd-id')` of @nestjs/passport, written as Nest's own
 * docs show (for sessions, a guard whose canActivate calls `super.logIn(request)`; no helper of
 * this package, no handleRequest of its own): with `PassportModule.register({ session: true,
 * keepSessionInfo: true })` another tab's login survives the session regeneration at sign-in;
 * without `keepSessionInfo` the strategy refuses the sign-in, naming the fix.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { Controller, Get, Module, Req, Res, UseGuards, type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import express, { type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NdIdStrategy, type NdIdDefaultUser } from '../../src/passport/strategy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  closeServer,
  listenOnLoopback,
  me,
  PERSONA,
  recordingLogger,
  RP_KEYS,
  startIntegrationProvider,
  startLogin,
} from '../helpers/harness.js';
import { decorateMethod, startNestApp } from './nest-support.js';

interface PlainNestRp {
  baseUrl: string;
  log: () => string;
  close(): Promise<void>;
}

async function startPlainNestRp(moduleOptions: { session: true; keepSessionInfo?: boolean }): Promise<PlainNestRp> {
  const recorded = recordingLogger();
  const expressApp = express();
  const server: Server = createServer(expressApp);
  const baseUrl = await listenOnLoopback(server);
  const { provider }: { provider: StartedProvider } = await startIntegrationProvider(`${baseUrl}/auth/callback`);

  class NdIdAuthStrategy extends PassportStrategy(NdIdStrategy, 'nd-id') {
    constructor() {
      super({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: RP_KEYS.privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL: `${baseUrl}/auth/callback`,
        logger: recorded.logger,
      });
    }
    validate(user: NdIdDefaultUser): NdIdDefaultUser {
      return { sub: user.sub, data: user.data };
    }
  }

  // Nest's passport recipe, "Sessions": the guard signs the person into the session after authenticating.
  class NdIdGuard extends AuthGuard('nd-id') {
    override async canActivate(context: ExecutionContext): Promise<boolean> {
      const result = (await super.canActivate(context)) as boolean;
      await super.logIn(context.switchToHttp().getRequest());
      return result;
    }
  }

  class AuthController {
    login(): void {
      // The guard has redirected to the service.
    }
    callback(req: Request, res: Response): void {
      res.redirect((req.authInfo as { returnTo?: string } | undefined)?.returnTo ?? '/');
    }
    me(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
  }
  const proto = AuthController.prototype;
  decorateMethod(proto, 'login', [Get('auth/login'), UseGuards(AuthGuard('nd-id'))]);
  Req()(proto, 'callback', 0);
  Res()(proto, 'callback', 1);
  decorateMethod(proto, 'callback', [Get('auth/callback'), UseGuards(NdIdGuard)]);
  Req()(proto, 'me', 0);
  decorateMethod(proto, 'me', [Get('me')]);
  Reflect.decorate([Controller()], AuthController);

  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [PassportModule.register(moduleOptions)],
        controllers: [AuthController],
        providers: [NdIdAuthStrategy],
      }),
    ],
    AppModule,
  );

  const app = await startNestApp(AppModule, expressApp, 'nest-plain-session-secret-0123456789');
  return {
    baseUrl,
    log: recorded.text,
    close: async () => {
      await provider.close();
      await app.close();
      await closeServer(server);
    },
  };
}

describe('NestJS, plain AuthGuard("nd-id") with PassportModule.register({ session: true, keepSessionInfo: true })', () => {
  let rp: PlainNestRp;
  beforeAll(async () => {
    rp = await startPlainNestRp({ session: true, keepSessionInfo: true });
  });
  afterAll(async () => {
    await rp.close();
  });

  it('lets two tabs of one browser both complete: the second tab’s login survives the first sign-in', async () => {
    const browser = new Browser(rp.baseUrl);
    const first = await approve(await startLogin(browser, '/auth/login'));
    const second = await approve(await startLogin(browser, '/auth/login'));
    const before = browser.jar.get('connect.sid');
    expect((await browser.get(second.href)).status).toBe(302);
    expect(browser.jar.get('connect.sid')).not.toBe(before); // the session id still changes at sign-in
    expect((await browser.get(first.href)).status).toBe(302);
    expect((await me(browser))?.data['profile.name']).toBe(PERSONA['profile.name']);
    expect(rp.log().match(/Sign-in completed/g)).toHaveLength(2); // both completed, neither merely sent on
    expect(rp.log()).not.toContain('pending_login_lost_at_sign_in');
  });
});

describe('NestJS, plain AuthGuard("nd-id") without keepSessionInfo', () => {
  let rp: PlainNestRp;
  beforeAll(async () => {
    rp = await startPlainNestRp({ session: true });
  });
  afterAll(async () => {
    await rp.close();
  });

  it('refuses the sign-in with the fix in the log: Passport would keep neither the sign-in record nor the other tab’s login', async () => {
    const browser = new Browser(rp.baseUrl);
    const login = await approve(await startLogin(browser, '/auth/login'));
    const callback = await browser.get(login.href);
    expect(callback.status).toBe(500);
    expect((await me(browser))?.sub).toBeUndefined(); // nobody is signed in
    const log = rp.log();
    expect(log).toContain('session_info_not_kept');
    expect(log).toContain('keepSessionInfo: true');
  });
});
