/**
 * `POST {mount}/backchannel-logout` for Express, and for Nest on Express: a thin translation to
 * the back-channel logout receiver.
 */
import type { NextFunction, Request, Response } from 'express';
import type { BackchannelLogout } from '../flow/backchannel-logout.js';
import { readBackchannelBody } from '../flow/backchannel-request.js';

/**
 * Whether a body parser already read the form: its result holds `logout_token`, or the request's
 * stream is used up. Express 4's JSON parser sets `req.body = {}` on a form it did not read, so an
 * empty object alone does not mean the form was empty.
 */
function parsedForm(req: Request, parsed: unknown): boolean {
  if (parsed === undefined) return false;
  if (typeof parsed === 'object' && parsed !== null && Object.hasOwn(parsed, 'logout_token')) return true;
  return !req.readable;
}

/**
 * Serves one back-channel logout POST on Express (or Nest on Express): the form as a body parser
 * left it (`express.urlencoded()`), or read here (bounded) when none read it; the receiver's
 * answer sent as is. Rejects only when the request's stream fails.
 */
export async function serveBackchannelLogout(receiver: BackchannelLogout, req: Request, res: Response): Promise<void> {
  // Before the body is read, so an error answer (a failing stream) is not stored either.
  res.set('Cache-Control', 'no-store');
  const parsed = (req as { body?: unknown }).body;
  const form = parsedForm(req, parsed) ? parsed : await readBackchannelBody(req);
  const answer = await receiver.handle({ contentType: req.get('content-type'), body: form });
  res.status(answer.status).set(answer.headers).send(answer.body);
}

/** The route of `ndIdRouter`: {@link serveBackchannelLogout}, a failure passed to `next`. */
export function backchannelLogoutRoute(receiver: BackchannelLogout) {
  return function backchannelLogout(req: Request, res: Response, next: NextFunction): void {
    serveBackchannelLogout(receiver, req, res).catch(next);
  };
}
