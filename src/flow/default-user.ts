/**
 * What an app keeps of a sign-in when it gives no verify callback: the person's `sub`, the
 * requested attributes, the validated ID token's claims and, from a provider with standard
 * userinfo, its claims, so that no provider's claims are lost on the way to the app.
 */
import type { LoginUser } from './login-flow.js';

/**
 * The signed-in person as kept by default (`req.user` without a verify callback):
 * - the service of the spec: `data` holds the decrypted attributes by scope name; no `userinfo`;
 * - a provider's standard JSON userinfo: its claims in `userinfo`, `data` empty;
 * - a userinfo JWT (signed, or signed then encrypted, e.g. Myinfo v5's `person_info`): its
 *   verified payload in `userinfo`;
 * - a sign-in from the ID token alone (only `openid` asked, or no userinfo endpoint): no `userinfo`.
 * `claims` and `signedInAt` are optional only because a session written by an earlier version lacks them.
 */
export type DefaultUser = Pick<LoginUser, 'sub' | 'data'> &
  Partial<Pick<LoginUser, 'claims' | 'userinfo' | 'authTime' | 'signedInAt'>>;

/** The default user of a completed login; absent members are left out, never `undefined`. */
export function defaultUser(user: LoginUser): DefaultUser {
  return {
    sub: user.sub,
    data: user.data,
    claims: user.claims,
    ...(user.userinfo === undefined ? {} : { userinfo: user.userinfo }),
    ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
    signedInAt: user.signedInAt,
  };
}
