/**
 * NdIdStrategy is a real Passport strategy: it extends the `Strategy` Passport itself exports,
 * so `instanceof` checks and NestJS's `PassportStrategy` mixin see one.
 */
import 'reflect-metadata';
import { PassportStrategy } from '@nestjs/passport';
import type { Request, Response } from 'express';
import passport from 'passport';
import { describe, expect, it } from 'vitest';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { testKeyPair } from '../helpers/keys.js';

const OPTIONS = {
  clientId: 'client',
  clientSecret: 'secret',
  privateKey: testKeyPair('rp').privateKeyPem,
  hostname: 'http://127.0.0.1:9',
  callbackURL: 'http://127.0.0.1:3000/auth/callback',
};

describe('NdIdStrategy as a Passport strategy', () => {
  it('is an instance of passport.Strategy (the Strategy of passport-strategy)', () => {
    const strategy = new NdIdStrategy(OPTIONS);
    expect(strategy).toBeInstanceOf(passport.Strategy);
    expect(strategy.name).toBe('nd-id');
  });

  it("NestJS's PassportStrategy mixin builds a Passport strategy registered under its name", async () => {
    class NestStrategy extends PassportStrategy(NdIdStrategy, 'nd-id-nest') {
      constructor() {
        super(OPTIONS);
      }
      validate(user: unknown): unknown {
        return user;
      }
    }
    const strategy = new NestStrategy();
    expect(strategy).toBeInstanceOf(passport.Strategy);
    expect(strategy).toBeInstanceOf(NdIdStrategy);
    // Registered with Passport under that name: Passport runs it (it asks for a session) rather
    // than answering "Unknown authentication strategy".
    const failed = await new Promise<unknown>((resolve) => {
      const req = { query: {}, headers: {}, get: () => undefined } as unknown as Request;
      passport.authenticate('nd-id-nest')(req, {} as Response, resolve);
    });
    passport.unuse('nd-id-nest');
    expect((failed as { code?: unknown }).code).toBe('session_missing');
  });
});
