/**
 * The HTTP control of the conformance plan: `GET /_provider/conformance` (the results),
 * `POST /_provider/conformance/report` (`{ "caseId", "signedIn" }`) and
 * `POST /_provider/conformance/finish` (ends the plan and answers the {@link Verdict}).
 */
import express, { type Router } from 'express';
import type { AuditFinding } from './audit.js';
import type { Conformance } from './conformance.js';
import type { ConformanceCaseId } from './conformance-cases.js';
import { verdictOf, type Verdict } from './verdict.js';



/** Path of the plan's results; `/report` and `/finish` sit under it. */
export const CONFORMANCE_PATH = '/_provider/conformance';

/** Where the finish request takes the rest of the verdict from. */
export interface FinishOptions {
  /** The audit's findings now. */
  findings: () => AuditFinding[];
  /** Whether findings fail the verdict. */
  auditStrict: boolean;
}

/** The router of the plan's HTTP control (see the file's comment). */
export function conformanceRouter(plan: Conformance, finish: FinishOptions): Router {
  const router = express.Router();
  router.post(`${CONFORMANCE_PATH}/finish`, (_req, res) => {
    const verdict = verdictOf(finish.findings(), plan.finish(), finish.auditStrict);
    // Listeners (the CLI ends its run there) hear of it once the answer is on its way.
    res.once('finish', () => plan.finishAnswered(verdict.conformance ?? plan.results()));
    res.status(200).set('Cache-Control', 'no-store').json(verdict);
  });
  router.get(CONFORMANCE_PATH, (_req, res) => {
    res.set('Cache-Control', 'no-store').json(plan.results());
  });
  router.post(`${CONFORMANCE_PATH}/report`, express.json({ limit: 1024 }), (req, res) => {
    const body = req.body as { caseId?: unknown; signedIn?: unknown } | undefined;
    try {
      plan.report(body?.caseId as ConformanceCaseId, body?.signedIn as boolean);
      res.status(204).end();
    } catch (err) {
      const description = err instanceof TypeError ? err.message : 'The report could not be read.';
      res.status(400).set('Cache-Control', 'no-store').json({ error: 'invalid_request', error_description: description });
    }
  });
  return router;
}

