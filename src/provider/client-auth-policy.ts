/**
 * Which client authentication the token endpoint accepts. Spec 4.2 names a JSON body; by default
 * a form body and HTTP Basic are accepted too and advertised in discovery, since generic OAuth
 * libraries send those. `strictClientAuth` takes the spec's way only, so an app that passes here
 * passes against a service that takes nothing else; the audit records `client_auth_outside_spec`.
 */

/** What a token request used to authenticate. */
export interface ClientAuthUse {
  /** Media type of the body, lower case, without parameters. */
  mediaType: string;
  /** True when an `Authorization: Basic` header was sent. */
  basic: boolean;
}

/** A refusal of a token request, as the token endpoint answers it (RFC 6749 5.2). */
export interface ClientAuthRefusal {
  status: number;
  error: 'invalid_request' | 'invalid_client';
  description: string;
  headers: Record<string, string>;
}

/** The media type of the spec's token request body. */
export const SPEC_TOKEN_MEDIA_TYPE = 'application/json';

/** True when `authorization` is an HTTP Basic credential. */
export function isBasicAuthorization(authorization: string | undefined): boolean {
  return authorization !== undefined && /^basic /i.test(authorization);
}

/** The refusal of a token request under `strict` client authentication, or `undefined`. */
export function clientAuthRefusal(strict: boolean, use: ClientAuthUse): ClientAuthRefusal | undefined {
  if (!strict) return undefined;
  if (use.basic) {
    return {
      status: 401,
      error: 'invalid_client',
      description:
        'HTTP Basic client authentication is not accepted (strictClientAuth): send client_id and client_secret in an application/json body, as spec 4.2 says.',
      // A 401 names a scheme (RFC 9110 15.5.2); no scheme is accepted in this mode but the body.
      headers: { 'WWW-Authenticate': 'Basic realm="nd-id-provider"' },
    };
  }
  if (use.mediaType !== SPEC_TOKEN_MEDIA_TYPE) {
    return {
      status: 400,
      error: 'invalid_request',
      description:
        'A form body is not accepted (strictClientAuth): send the token request as application/json with client_id and client_secret in it, as spec 4.2 says.',
      headers: {},
    };
  }
  return undefined;
}

/** The discovery fields about client authentication at the token endpoint. */
export function clientAuthMetadata(strict: boolean): Record<string, string[]> {
  return {
    // client_secret_post: the credentials in the request body (in this service, a JSON body).
    token_endpoint_auth_methods_supported: strict
      ? ['client_secret_post']
      : ['client_secret_post', 'client_secret_basic'],
    // Not an OpenID or RFC 8414 name, so it cannot be mistaken for one: the body encodings taken.
    nd_id_token_endpoint_content_types_supported: strict
      ? [SPEC_TOKEN_MEDIA_TYPE]
      : [SPEC_TOKEN_MEDIA_TYPE, 'application/x-www-form-urlencoded'],
  };
}
