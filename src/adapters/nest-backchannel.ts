/**
 * The back-channel logout route for NestJS (Nest on Express): a controller's POST handler hands
 * its request and response to the Express route of `ndIdRouter`, which takes the form whether or
 * not Nest's body parser read it. Typed structurally: `@nestjs/*` is never loaded.
 */
import type { Request, Response } from 'express';
import { checkBackchannelLogout, type BackchannelLogout } from '../flow/backchannel-logout.js';
import { serveBackchannelLogout } from '../passport/backchannel-route.js';

/**
 * Serves a back-channel logout POST with `receiver` (from `createBackchannelLogout`) and sends its
 * answer: 200, or 400 `invalid_request` (`Cache-Control: no-store` on both). Call it from a
 * `@Post()` handler that takes `@Req()` and `@Res()`.
 *
 * ```ts
 * @Post('backchannel-logout')
 * backchannelLogout(@Req() req: Request, @Res() res: Response): Promise<void> {
 *   return ndIdBackchannelLogout(req, res, backchannelLogout);
 * }
 * ```
 * @throws TypeError when `receiver` is not made by `createBackchannelLogout`.
 */
export function ndIdBackchannelLogout(request: object, response: object, receiver: BackchannelLogout): Promise<void> {
  const checked = checkBackchannelLogout(receiver, 'ndIdBackchannelLogout', 'receiver');
  return serveBackchannelLogout(checked, request as Request, response as Response);
}
