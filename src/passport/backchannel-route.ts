/** `POST {mount}/backchannel-logout` for Express: a thin translation to the back-channel logout receiver. */
import type { NextFunction, Request, Response } from 'express';
import type { BackchannelLogout } from '../flow/backchannel-logout.js';
import { readBackchannelBody } from '../flow/backchannel-request.js';

/**
 * The route: the form as a body parser left it (`express.urlencoded()`), or read here (bounded)
 * when none ran; the receiver's answer sent as is.
 */
export function backchannelLogoutRoute(receiver: BackchannelLogout) {
  return function backchannelLogout(req: Request, res: Response, next: NextFunction): void {
    const parsed = (req as { body?: unknown }).body;
    const body = parsed === undefined && req.readable ? readBackchannelBody(req) : Promise.resolve(parsed);
    body
      .then((form) => receiver.handle({ contentType: req.get('content-type'), body: form }))
      .then((answer) => {
        res.status(answer.status).set(answer.headers).send(answer.body);
      })
      .catch(next);
  };
}
