/** `GET /_provider/audit`: the audit's findings as JSON, when the provider's `auditEndpoint` is on. */
import express, { type Router } from 'express';
import type { Audit } from './audit.js';

/** Path of the audit endpoint. */
export const AUDIT_PATH = '/_provider/audit';

/** The router serving the findings of `audit` (all clients, or `?client_id=`). */
export function auditRouter(audit: Audit): Router {
  const router = express.Router();
  router.get(AUDIT_PATH, (req, res) => {
    const clientId = req.query['client_id'];
    if (clientId !== undefined && typeof clientId !== 'string') {
      res.status(400).set('Cache-Control', 'no-store').json({ error: 'invalid_request', error_description: 'Send client_id once.' });
      return;
    }
    res.set('Cache-Control', 'no-store').json({ findings: audit.findings(clientId) });
  });
  return router;
}
