/**
 * NdIdStrategy in the FAPI 2.0 profile in a real NestJS 11 app (`PassportStrategy(NdIdStrategy,
 * 'nd-id')`, an `AuthGuard('nd-id')` on the login and callback routes, express-session), against
 * the provider over loopback: the login is pushed and the person signs in.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { Controller, Get, Module, Req, Res, UseGuards, type ExecutionContext } from '@nestjs/common';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import express, { type Request, type Response } from 'express';
import { afterAll, expect, it } from 'vitest';
import { ndIdGuardResult, ndIdLogIn } from '../../src/adapters/nest.js';
import { NdIdStrategy, type NdIdDefaultUser } from '../../src/passport/strategy.js';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { closeServer, listenOnLoopback } from '../helpers/harness.js';
import { decorateMethod, startNestApp } from '../integrations/nest-support.js';
import { appKeys, fapiRegistration, walkFapiLogin, fapiClientOptions } from './harness.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

it('signs a person in through a pushed, DPoP-bound login with private_key_jwt and an encrypted ID token', async () => {
  const keys = appKeys();
  const expressApp = express();
  const server: Server = createServer(expressApp);
  const baseUrl = await listenOnLoopback(server);
  const provider: StartedProvider = await startProvider({
    autoApprove: true,
    clients: [fapiRegistration(keys, `${baseUrl}/auth/callback`)],
  });
  closers.push(
    () => closeServer(server),
    () => provider.close(),
  );

  class FapiStrategy extends PassportStrategy(NdIdStrategy, 'nd-id') {
    constructor() {
      super({
        ...fapiClientOptions(keys, provider.baseUrl, `${baseUrl}/auth/callback`),
        callbackURL: `${baseUrl}/auth/callback`,
      });
    }
    validate(user: NdIdDefaultUser): NdIdDefaultUser {
      return { sub: user.sub, data: user.data };
    }
  }
  const strategy = new FapiStrategy();
  class Guard extends AuthGuard('nd-id') {
    override handleRequest<U>(err: unknown, user: U, info: unknown, _context: ExecutionContext, status?: number): U {
      return ndIdGuardResult(err, user, info, status, { retryHref: '/auth/login' });
    }
  }
  class AuthController {
    login(): void {
      // The guard has redirected to the service.
    }
    async callback(req: Request, res: Response): Promise<void> {
      await ndIdLogIn(req, req.user, strategy);
      res.redirect('/me');
    }
    me(req: Request): { user: unknown } {
      return { user: req.user ?? null };
    }
  }
  const proto = AuthController.prototype;
  decorateMethod(proto, 'login', [Get('auth/login'), UseGuards(Guard)]);
  Req()(proto, 'callback', 0);
  Res()(proto, 'callback', 1);
  decorateMethod(proto, 'callback', [Get('auth/callback'), UseGuards(Guard)]);
  Req()(proto, 'me', 0);
  decorateMethod(proto, 'me', [Get('me')]);
  Reflect.decorate([Controller()], AuthController);
  class AppModule {}
  Reflect.decorate(
    [
      Module({
        imports: [PassportModule.register({ session: true, keepSessionInfo: true })],
        controllers: [AuthController],
        providers: [{ provide: FapiStrategy, useValue: strategy }],
      }),
    ],
    AppModule,
  );
  const app = await startNestApp(AppModule, expressApp, 'nest-fapi-session-secret-0123456789');
  closers.push(() => app.close());

  const { me } = await walkFapiLogin(baseUrl);
  expect((me as { user: { data: Record<string, string> } | null }).user?.data['profile.name']).toBe(
    provider.provider.personas[0]!['profile.name'],
  );
});
