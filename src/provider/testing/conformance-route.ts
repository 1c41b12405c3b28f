/** The conformance plan's HTTP control routes (results, report, finish); control routes, so `controlToken` applies. */
import { empty, json, oauthError } from '../http/answer.js';
import type { ProviderRoute } from '../router.js';
import type { AuditFinding } from './audit.js';
import type { Conformance } from './conformance.js';
import type { ConformanceCaseId } from './conformance-cases.js';
import { verdictOf } from './verdict.js';

/** Path of the plan's results; `/report` and `/finish` sit under it. */
export const CONFORMANCE_PATH = '/_provider/conformance';

/** Where the finish request takes the rest of the verdict from. */
export interface FinishOptions {
  /** The audit's findings now. */
  findings: () => AuditFinding[];
  /** Whether findings fail the verdict. */
  auditStrict: boolean;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The routes of the plan's HTTP control (see the file's comment). */
export function conformanceRoutes(plan: Conformance, finish: FinishOptions): ProviderRoute[] {
  return [
    {
      endpoint: 'control',
      method: 'GET',
      path: CONFORMANCE_PATH,
      failure: 'json',
      control: true,
      handle: () => json(200, plan.results(), NO_STORE),
    },
    {
      endpoint: 'control',
      method: 'POST',
      path: `${CONFORMANCE_PATH}/report`,
      failure: 'json',
      control: true,
      body: { maxBytes: 1024 },
      handle: (req) => {
        const body = (req.body.kind === 'json' ? req.body.value : undefined) as
          | { caseId?: unknown; signedIn?: unknown }
          | undefined;
        try {
          plan.report(body?.caseId as ConformanceCaseId, body?.signedIn as boolean);
          return empty(204);
        } catch (err) {
          const description = err instanceof TypeError ? err.message : 'The report could not be read.';
          return oauthError(400, 'invalid_request', description);
        }
      },
    },
    {
      endpoint: 'control',
      method: 'POST',
      path: `${CONFORMANCE_PATH}/finish`,
      failure: 'json',
      control: true,
      handle: () => {
        const verdict = verdictOf(finish.findings(), plan.finish(), finish.auditStrict);
        // Listeners (the CLI ends its run there) hear of it once the answer is on its way.
        return {
          ...json(200, verdict, NO_STORE),
          afterWrite: () => plan.finishAnswered(verdict.conformance ?? plan.results()),
        };
      },
    },
  ];
}
