/**
 * The verdict of a test run against the provider: the audit's findings and the conformance plan's
 * results, whether the run passed, and the exit status a CI job should end with. The same value is
 * answered by `POST /_provider/conformance/finish` and printed by `nd-id-provider` at exit.
 */
import { formatAuditTable, type AuditFinding } from './audit.js';
import { formatConformanceTable, type ConformanceResults } from './conformance.js';

/** The end of a run. */
export interface Verdict {
  /** True when no conformance case failed and, with `auditStrict`, the audit has no findings. */
  passed: boolean;
  /** 0 when passed, 1 otherwise. */
  exitCode: 0 | 1;
  /** Whether audit findings fail the run (`auditStrict`, CLI `--audit-strict`). */
  auditStrict: boolean;
  /** The plan's final results, or `null` when no plan ran. */
  conformance: ConformanceResults | null;
  /** The audit's findings, of every client. */
  findings: AuditFinding[];
  /** The audit and conformance tables as plain text, as the CLI prints them. */
  text: string;
}

/** The verdict of `findings` and `conformance` (undefined when no plan ran). */
export function verdictOf(findings: AuditFinding[], conformance: ConformanceResults | undefined, auditStrict: boolean): Verdict {
  const passed = !(auditStrict && findings.length > 0) && !(conformance !== undefined && conformance.summary.fail > 0);
  const text =
    formatAuditTable(findings) +
    (conformance !== undefined ? formatConformanceTable(conformance) : '') +
    `Verdict: ${passed ? 'PASSED' : 'FAILED'}${auditStrict ? ' (audit findings count)' : ''}\n`;
  return { passed, exitCode: passed ? 0 : 1, auditStrict, conformance: conformance ?? null, findings, text };
}
