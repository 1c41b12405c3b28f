/** A validated authorization request: a leaf, so the validation and the stores need not import each other. */

/** A validated authorization request. */
export interface ValidRequest {
  /** The registered client. */
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string;
  /** True for `prompt=none`: answered with `login_required` at once (no sign-in session is kept). */
  promptNone: boolean;
  /** `max_age` in seconds, when sent. */
  maxAge: number | undefined;
  /** `login_hint`, when sent (a persona id, used by auto-approval). */
  loginHint: string | undefined;
  /** The short message shown on the phone page, when sent (`authentication_context_message`). */
  contextMessage: string | undefined;
  /** The kind of sign-in, when sent (`authentication_context_type`, for example `APP_AUTHENTICATION_DEFAULT`). */
  contextType: string | undefined;
}
