/** The media type of a request's body, as the body reader and the endpoints compare it. */
import type { IncomingHttpHeaders } from 'node:http';

/** The media type of a request (`application/json`), lower case, without parameters; '' when none. */
export function mediaTypeOf(headers: IncomingHttpHeaders): string {
  const header = headers['content-type'];
  if (header === undefined) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}
