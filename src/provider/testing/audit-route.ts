/**
 * `GET /_provider/audit` under `auditEndpoint`. Anyone reaching the port can read findings (and
 * plant some in a client's name) unless `controlToken` is set.
 */
import { json } from '../http/answer.js';
import type { ProviderRoute } from '../router.js';
import type { Audit } from './audit.js';

/** Path of the audit endpoint. */
export const AUDIT_PATH = '/_provider/audit';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The route serving the findings of `audit` (all clients, or `?client_id=`). */
export function auditRoutes(audit: Audit): ProviderRoute[] {
  return [
    {
      endpoint: 'control',
      method: 'GET',
      path: AUDIT_PATH,
      failure: 'json',
      control: true,
      handle: (req) => {
        const ids = req.query.getAll('client_id');
        if (ids.length > 1)
          return json(400, { error: 'invalid_request', error_description: 'Send client_id once.' }, NO_STORE);
        return json(200, { findings: audit.findings(ids[0]) }, NO_STORE);
      },
    },
  ];
}
