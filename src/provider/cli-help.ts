/** The text of `nd-id-provider --help`: every option, how a run ends, `init`, and examples. */
import { INIT_FILES } from './cli-init.js';

/** Port used when --port is not given. */
export const DEFAULT_PORT = 4000;

/** Printed by `nd-id-provider --help` and `nd-id-provider init --help`. */
export const HELP = `Usage: nd-id-provider --clients FILE [options]
       nd-id-provider init --redirect-uri URL [--dir DIR] [--client-id ID] [--profile fapi2] [--force]

Runs a strict test instance of the national digital identity service: every endpoint,
a QR login page and a simulated mobile app. For development and CI only.

Options:
  --clients FILE            JSON file of registered clients (required to serve):
                            [{ "clientId", "clientSecret", "redirectUris": [...],
                               "publicKey" (PEM or JWK) | "publicKeyFile", "name"?,
                               "backchannelLogoutUri"? }]
                            or { "clients": [...], "personas": [...] }; a FAPI 2.0 client has
                            "profile": "fapi2", "jwks" | "jwksUri" and
                            "idTokenEncryptedResponseAlg" instead of "clientSecret"; a client
                            with "userinfo": false is served no userinfo (and needs no key).
                            The object form may also set "issuerPath",
                            "authorizationResponseIss", "userinfo", "ttl" and "signingKeysFile"
                            (a path beside the file) or "signingKeys"; a flag overrides them
  --port N                  Port to listen on (default ${DEFAULT_PORT}; 0 = any free port)
  --host HOST               Interface to listen on (default 127.0.0.1)
  --base-url URL            Public origin, when it differs from http://HOST:PORT
  --auto-approve [PERSONA]  Skip the QR page: approve at once as PERSONA (default: the first)
  --signing-key FILE        RS256 private key (PEM or JWK) to sign ID tokens (default: generated)
  --signing-keys FILE       Private JWKS of the signing keys, one per "alg" (RS256, PS256, ES256,
                            EdDSA; init writes one): every kid stays the same across restarts
  --issuer-path PATH        Issuer path instead of /v2 (e.g. /fapi, or / for the origin); every
                            endpoint moves with it
  --no-iss                  Authorization responses carry no "iss" parameter (RFC 9207)
  --no-userinfo             Serve no userinfo endpoint: sign-in from the ID token alone
  --token-ttl SECONDS       Lifetime of access and ID tokens (default 600)
  --code-ttl SECONDS        Lifetime of an authorization code (default 60)
  --login-ttl SECONDS       How long a QR page can be answered (default 120)
  --log                     Log every request outcome to stderr, not only refusals and audit
                            findings (which are always logged; never secrets or personal data)
  --dpop-nonce              FAPI 2.0: DPoP proofs must carry the server nonce (use_dpop_nonce)
  --strict-client-auth      Token endpoint takes client_id and client_secret in a JSON body
                            only, as the spec says; HTTP Basic and form bodies are refused and
                            recorded by the audit (client_auth_outside_spec)
  --fault-control           Serve POST/GET/DELETE /_provider/faults, to make the provider
                            misbehave on purpose from tests (latency, 500/503, resets, bad
                            bodies, bad ID tokens). Anyone who can reach the port can use it.
  --audit-endpoint          Serve GET /_provider/audit: what each client did wrong (reused or
                            missing state, nonce or PKCE challenge, codes redeemed twice, ...)
  --conformance             Run the offline conformance plan on the first client: each of its
                            next authorizations gets one hostile case. Results at GET
                            /_provider/conformance, reports at POST /_provider/conformance/report;
                            POST /_provider/conformance/finish ends the run and answers the verdict
  --control-token-file FILE Require "Authorization: Bearer <token>" (the file's content, 16 to
                            512 characters) on the audit, conformance and fault controls (the
                            finish request included); without it anyone who can reach the port
                            can read and plant audit findings, end the run or inject faults.
                            Or set ND_ID_CONTROL_TOKEN.
  --audit-strict            Audit findings fail the verdict (exit status 1), for CI
  --exit-after N|plan       End the run after N seconds, or once the conformance plan's last
                            case is decided (plan, with --conformance)
  --personas FILE           JSON file of the people to sign in as (an array of { "id",
                            "profile.name", "profile.nric_number", "profile.passport_expiry_date" })
  --list-personas           Print the people you can sign in as, then exit
  --version                 Print the version, then exit
  --help                    Print this help, then exit

Ending a run: SIGINT (Ctrl-C), SIGTERM or SIGHUP sent to this process, or to the npx, npm
exec or shell that started it (the run ends when the process that started it is gone), POST
/_provider/conformance/finish, or --exit-after. It prints the audit table, the conformance
table (with --conformance) and "Verdict: PASSED" or "Verdict: FAILED", and exits 0 or 1.

Init:
  init --redirect-uri URL   Write ${INIT_FILES.privateKey} (the app's key), ${INIT_FILES.publicKey}
                            and ${INIT_FILES.clients} registering the callback URL, with a fresh
                            client secret, and ${INIT_FILES.providerSigningKeys} (the provider's
                            signing keys, named in ${INIT_FILES.clients}). --dir DIR writes there; --client-id ID (default
                            my-app); existing files are kept unless --force. --profile fapi2
                            registers a FAPI 2.0 client instead (no secret; EC signing and
                            encryption keys in ${INIT_FILES.fapiKeys}, public JWKS registered).

Environment:
  ND_ID_SUBJECT_SECRET      Secret of the pairwise "sub" (at least 16 characters). Set it to
                            keep "sub" values stable across restarts.
  ND_ID_CONTROL_TOKEN       The control token (see --control-token-file).
  ND_ID_SIGNING_KEY         The RS256 signing key as text (PEM, or a JWK as JSON), for --signing-key
  ND_ID_SIGNING_KEYS        The signing keys as JWKS JSON text, for --signing-keys

Examples:
  nd-id-provider init --redirect-uri http://localhost:3000/auth/callback
  nd-id-provider --clients clients.json
  nd-id-provider --clients clients.json --port 4000 --auto-approve ada
  nd-id-provider --clients clients.json --auto-approve --audit-strict --strict-client-auth --exit-after 300
  nd-id-provider --clients clients.json --auto-approve --conformance &
    ... run the app's tests ...
    curl -s -X POST http://127.0.0.1:4000/_provider/conformance/finish   # JSON verdict; the process exits 0 or 1
    (with a control token: add -H "Authorization: Bearer $ND_ID_CONTROL_TOKEN")
`;
