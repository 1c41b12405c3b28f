/** The fetch-standard back-channel logout handler: a thin translation to the receiver. */
import {
  checkBackchannelLogout,
  createBackchannelLogout,
  MAX_BACKCHANNEL_LOGOUT_BODY_BYTES,
  readBackchannelBody,
  type BackchannelLogout,
  type BackchannelLogoutOptions,
} from '../flow/backchannel-logout.js';

const NOT_FOUND_HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' };

/**
 * The receiver to use: the one given, or one built on the fetch handlers' own client, sessions
 * and replay store when that client validates logout tokens (an `IdClient`); else none.
 */
export function fetchBackchannelReceiver(
  given: BackchannelLogout | undefined,
  defaults: { client: unknown } & Omit<BackchannelLogoutOptions, 'client' | 'maxTokenAge'>,
): BackchannelLogout | undefined {
  if (given !== undefined) return checkBackchannelLogout(given, 'createFetchLogin', 'backchannelLogout');
  const client = defaults.client as Partial<BackchannelLogoutOptions['client']> | null;
  if (typeof client !== 'object' || client === null || typeof client.validateLogoutToken !== 'function')
    return undefined;
  return createBackchannelLogout({
    client: client as BackchannelLogoutOptions['client'],
    ...(defaults.sessions === undefined ? {} : { sessions: defaults.sessions }),
    ...(defaults.replayStore === undefined ? {} : { replayStore: defaults.replayStore }),
    ...(defaults.logger === undefined ? {} : { logger: defaults.logger }),
  });
}

/** POST handler: the form read (bounded), handled, and the receiver's answer sent; 404 without a receiver. */
export function fetchBackchannelLogout(receiver: BackchannelLogout | undefined) {
  return async function backchannelLogout(request: Request): Promise<Response> {
    if (receiver === undefined || request.method !== 'POST')
      return new Response('Not found', { status: 404, headers: NOT_FOUND_HEADERS });
    const declared = Number(request.headers.get('content-length') ?? '0');
    const body =
      request.body === null || declared > MAX_BACKCHANNEL_LOGOUT_BODY_BYTES
        ? ''
        : await readBackchannelBody(request.body as unknown as AsyncIterable<Uint8Array>);
    const answer = await receiver.handle({ contentType: request.headers.get('content-type') ?? undefined, body });
    return new Response(answer.status === 200 ? null : answer.body, { status: answer.status, headers: answer.headers });
  };
}
