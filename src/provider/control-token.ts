/** With `controlToken` set, the test controls answer 401 without `Authorization: Bearer <controlToken>` (constant-time compare). */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { oauthError, type Answer } from './http/answer.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Checks requests against one token. */
export class ControlToken {
  readonly #expected: Buffer;

  constructor(token: string) {
    this.#expected = digest(token);
  }

  /** undefined when `headers` carry the token; otherwise the 401 answer. */
  refusal(headers: IncomingHttpHeaders): Answer | undefined {
    const header = headers.authorization ?? '';
    const given = header.length <= 1024 && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
    if (given !== undefined && timingSafeEqual(digest(given), this.#expected)) return undefined;
    return oauthError(
      401,
      'invalid_token',
      "This control needs the provider's control token: send Authorization: Bearer <token>.",
      {
        'WWW-Authenticate':
          given === undefined
            ? 'Bearer realm="nd-id-provider"'
            : 'Bearer realm="nd-id-provider", error="invalid_token"',
      },
    );
  }
}
