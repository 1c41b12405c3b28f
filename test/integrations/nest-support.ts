/**
 * What the NestJS integration tests share: applying decorators without the decorator compiler
 * option, and starting a Nest app on Express with express-session and Passport's session.
 */
import 'reflect-metadata';
import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import session from 'express-session';
import passport from 'passport';

/** Applies method decorators as the `@Get()`/`@UseGuards()` syntax compiles to. */
export function decorateMethod(target: object, key: string, decorators: MethodDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(target, key);
  const decorated = Reflect.decorate(decorators, target, key, descriptor) as PropertyDescriptor | undefined;
  if (decorated !== undefined) Object.defineProperty(target, key, decorated);
}

/**
 * Starts `appModule` on `expressApp` with express-session, Passport's session and the user stored
 * as is; with Nest's JSON and form body parsers unless `bodyParser` is false.
 */
export async function startNestApp(
  appModule: Type<unknown>,
  expressApp: Express,
  sessionSecret: string,
  configure: (app: INestApplication) => void = () => undefined,
  bodyParser = true,
): Promise<INestApplication> {
  passport.serializeUser((user, done) => done(null, user));
  passport.deserializeUser((user: Express.User, done) => done(null, user));
  const app = await NestFactory.create(appModule, new ExpressAdapter(expressApp), { logger: false, bodyParser });
  app.use(session({ secret: sessionSecret, resave: false, saveUninitialized: false }));
  app.use(passport.initialize());
  app.use(passport.session());
  configure(app);
  await app.init();
  return app;
}
