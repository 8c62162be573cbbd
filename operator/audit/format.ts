/** An audit report as text (grouped by webhook, then namespace), JSON or YAML. */
import { stringify } from 'yaml';
import type { AuditFinding, AuditReport } from './audit.js';

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    const group = groups.get(name);
    if (group) group.push(item);
    else groups.set(name, [item]);
  }
  return new Map([...groups].sort(([a], [b]) => a.localeCompare(b)));
}

const identity = (finding: AuditFinding): string =>
  `${finding.kind} ${finding.namespace ? `${finding.namespace}/` : ''}${finding.name}`;

export function formatAuditText(report: AuditReport): string {
  const refused = report.findings.filter((finding) => finding.outcome === 'refused');
  const changed = report.findings.filter((finding) => finding.outcome === 'changed');
  const judged = Object.entries(report.judged)
    .map(([kind, count]) => `${kind} ${count} of ${report.held[kind] ?? '?'}`)
    .join(', ');
  const sum = (counts: Record<string, number>): number =>
    Object.values(counts).reduce((total, count) => total + count, 0);
  const lines = [
    `audit: ${sum(report.judged)} of ${sum(report.held)} objects judged${judged ? ` (${judged})` : ''}; ${refused.length} would be refused, ${changed.length} changed`,
  ];
  for (const [title, findings] of [
    ['REFUSED by', refused],
    ['CHANGED by', changed],
  ] as const) {
    for (const [webhook, ofWebhook] of groupBy(findings, (finding) => finding.webhook)) {
      lines.push('', `${title} ${webhook} (${ofWebhook.length})`);
      for (const [namespace, inNamespace] of groupBy(ofWebhook, (finding) => finding.namespace ?? '')) {
        lines.push(`  ${namespace ? `namespace ${namespace}` : 'cluster-scoped'}`);
        for (const finding of inNamespace) lines.push(`    ${identity(finding)}: ${finding.message}`);
      }
    }
  }
  if (report.dropped > 0) lines.push('', `…and ${report.dropped} more findings not listed`);
  for (const kind of report.resumed) {
    lines.push(
      '',
      `${kind}: its list's snapshot expired part-way; the rest was read from a newer one (objects created or deleted meanwhile may be missing or extra)`,
    );
  }
  for (const skip of report.skipped) lines.push('', `skipped ${skip}`);
  return `${lines.join('\n')}\n`;
}

export function formatAuditJson(report: AuditReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export function formatAuditYaml(report: AuditReport): string {
  return stringify(report, { lineWidth: 0, aliasDuplicateObjects: false });
}
