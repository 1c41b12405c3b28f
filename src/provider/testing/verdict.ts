/** The verdict of a run: audit findings, conformance results, and the exit status for CI (`/finish` and `nd-id-provider`). */
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
export function verdictOf(
  findings: AuditFinding[],
  conformance: ConformanceResults | undefined,
  auditStrict: boolean,
): Verdict {
  const passed = !(auditStrict && findings.length > 0) && !(conformance !== undefined && conformance.summary.fail > 0);
  const text =
    formatAuditTable(findings) +
    (conformance !== undefined ? formatConformanceTable(conformance) : '') +
    `Verdict: ${passed ? 'PASSED' : 'FAILED'}${auditStrict ? ' (audit findings count)' : ''}\n`;
  return { passed, exitCode: passed ? 0 : 1, auditStrict, conformance: conformance ?? null, findings, text };
}
