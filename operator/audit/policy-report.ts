/**
 * The audit's findings as `wgpolicyk8s.io/v1alpha2` PolicyReports, the format Kyverno writes and
 * Policy Reporter shows: one PolicyReport per namespace for its objects, one ClusterPolicyReport
 * for the cluster-scoped ones (Nodes). Each webhook is a policy; its rule is `admission` for
 * whether it would admit the object, `mutation` for whether a mutating webhook would change it
 * (quota-usage: whether a quota's pods fit its max). A refusal is
 * `fail`, a change a mutating webhook would still make is `warn`, every other webhook called is
 * `pass`.
 *
 * Ours are named ADMISSION_POLICY_REPORT_NAME and labelled managed-by admission-operator; a run
 * server-side applies them whole (so a re-run replaces its results rather than adding to them)
 * and deletes those of its earlier runs whose namespace has nothing left to report in the scope
 * it audited. Reports of any other name or manager, Kyverno's among them, are never touched.
 */
import { retryWhenBusy } from '../kube/retry-when-busy.js';
import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { truncate } from '../../webhook/util/bounded-text.js';
import { isNotFound, messageOf, statusOf } from '../kube/errors.js';
import { pagedList } from '../kube/paged-list.js';
import { collectionPath } from '../../webhook/kinds.js';
import type { AuditedObject, AuditJudgement } from './audit.js';

export const POLICY_REPORT_GROUP = 'wgpolicyk8s.io';
export const POLICY_REPORT_VERSION = 'v1alpha2';
export const ADMISSION_POLICY_REPORT_NAME = 'admission-operator-audit';
export const POLICY_REPORT_SOURCE = 'admission-operator';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
const MANAGED_BY = 'admission-operator';
const FIELD_MANAGER = 'admission-operator-audit';

/**
 * Results one report lists: far inside etcd's object size limit at the bounded message length.
 * Refusals and changes are listed before passes; the summary counts every result.
 */
export const MAX_RESULTS_PER_REPORT = 1000;
/**
 * The results' JSON in one report, at most: the API server stores an object of up to 1.5 MiB
 * (etcd's request limit), and a thousand results of long names and full messages would pass it.
 */
export const MAX_RESULTS_BYTES = 1024 * 1024;
/** Our existing reports' names read per list request (metadata only: a few hundred bytes each). */
const EXISTING_PAGE_SIZE = 500;
/** A result's message, bounded: Policy Reporter shows it in a table cell. */
export const MAX_RESULT_MESSAGE_CHARS = 1024;

export type PolicyResultValue = 'pass' | 'fail' | 'warn' | 'error' | 'skip';

export interface PolicyReportResult {
  source: string;
  policy: string;
  rule: string;
  result: PolicyResultValue;
  scored: boolean;
  message?: string;
  timestamp: { seconds: number; nanos: number };
  resources: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string }[];
  properties?: Record<string, string>;
}

export interface PolicyReport extends KubernetesObject {
  apiVersion: `${typeof POLICY_REPORT_GROUP}/${typeof POLICY_REPORT_VERSION}`;
  kind: 'PolicyReport' | 'ClusterPolicyReport';
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  summary: Record<PolicyResultValue, number>;
  results: PolicyReportResult[];
}

interface Collected {
  /** fail and warn, then pass: kept up to MAX_RESULTS_PER_REPORT. */
  problems: PolicyReportResult[];
  passes: PolicyReportResult[];
  summary: Record<PolicyReportResult['result'], number>;
}

const RESULT_OF: Record<AuditJudgement['outcome'], PolicyResultValue> = {
  refused: 'fail',
  changed: 'warn',
  passed: 'pass',
};

/** Collects an audit's judgements into reports, a namespace at a time ('' for cluster-scoped objects). */
export class PolicyReportCollector {
  private readonly byNamespace = new Map<string, Collected>();
  private readonly timestamp: PolicyReportResult['timestamp'];

  constructor(now: Date = new Date()) {
    this.timestamp = { seconds: Math.floor(now.getTime() / 1000), nanos: 0 };
  }

  /** Give to runAudit as onJudged. */
  readonly add = (object: AuditedObject, judgements: readonly AuditJudgement[]): void => {
    const key = object.namespace ?? '';
    let collected = this.byNamespace.get(key);
    if (!collected) {
      collected = { problems: [], passes: [], summary: { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 } };
      this.byNamespace.set(key, collected);
    }
    for (const judgement of judgements) {
      const result = RESULT_OF[judgement.outcome];
      collected.summary[result] += 1;
      const kept = result === 'pass' ? collected.passes : collected.problems;
      if (kept.length >= MAX_RESULTS_PER_REPORT) continue;
      kept.push({
        source: POLICY_REPORT_SOURCE,
        policy: judgement.webhook,
        rule: judgement.mutating && judgement.outcome !== 'refused' ? 'mutation' : 'admission',
        result,
        scored: true,
        ...(judgement.message ? { message: truncate(judgement.message, MAX_RESULT_MESSAGE_CHARS) } : {}),
        timestamp: this.timestamp,
        resources: [
          {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.name,
            ...(object.namespace ? { namespace: object.namespace } : {}),
            ...(object.uid ? { uid: object.uid } : {}),
          },
        ],
      });
    }
  };

  /** One report per namespace with judged objects, and a ClusterPolicyReport for the cluster-scoped ones. */
  reports(): PolicyReport[] {
    return [...this.byNamespace]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([namespace, { problems, passes, summary }]) => ({
        apiVersion: `${POLICY_REPORT_GROUP}/${POLICY_REPORT_VERSION}`,
        kind: namespace ? 'PolicyReport' : 'ClusterPolicyReport',
        metadata: {
          name: ADMISSION_POLICY_REPORT_NAME,
          ...(namespace ? { namespace } : {}),
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
        },
        summary,
        results: boundedResults([...problems, ...passes]),
      }));
  }
}

/** The first results that fit MAX_RESULTS_PER_REPORT and MAX_RESULTS_BYTES. */
function boundedResults(results: readonly PolicyReportResult[]): PolicyReportResult[] {
  const kept: PolicyReportResult[] = [];
  let bytes = 0;
  for (const result of results) {
    if (kept.length >= MAX_RESULTS_PER_REPORT) break;
    bytes += Buffer.byteLength(JSON.stringify(result)) + 1;
    if (bytes > MAX_RESULTS_BYTES) break;
    kept.push(result);
  }
  return kept;
}

export class PolicyReportCrdMissing extends Error {
  override name = 'PolicyReportCrdMissing';
  constructor() {
    super(
      `the PolicyReport API (${POLICY_REPORT_GROUP}/${POLICY_REPORT_VERSION}) is not served: install its CRDs ` +
        `(the chart's audit.policyReports.installCRDs=true, or those Kyverno or Policy Reporter install) and run again`,
    );
  }
}

export interface PublishedReports {
  written: string[];
  deleted: string[];
  /** Reports of namespaces deleted since they were listed: nothing to report there any more. */
  skipped: string[];
}

/** The namespace was deleted, or is being deleted, between the audit's list and the write. */
function namespaceGone(error: unknown): boolean {
  const status = statusOf(error);
  return status === 404 || (status === 403 && /being terminated/.test(messageOf(error)));
}

const describe = (report: { kind: string; metadata: { name?: string; namespace?: string } }): string =>
  `${report.kind} ${report.metadata.namespace ? `${report.metadata.namespace}/` : ''}${report.metadata.name ?? ''}`;

/**
 * Writes the reports and deletes ours that the run no longer has (in `namespace` only, when the
 * audit was of one namespace). Throws PolicyReportCrdMissing when the API is not served.
 */
export async function publishPolicyReports(
  kubeConfig: KubeConfig,
  reports: readonly PolicyReport[],
  namespace: string | undefined,
): Promise<PublishedReports> {
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  const existing: { kind: string; metadata: { name?: string; namespace?: string } }[] = [];
  try {
    for (const [kind, plural] of [
      ['PolicyReport', 'policyreports'],
      ['ClusterPolicyReport', 'clusterpolicyreports'],
    ] as const) {
      if (namespace !== undefined && kind === 'ClusterPolicyReport') continue;
      const path = collectionPath(
        { group: POLICY_REPORT_GROUP, version: POLICY_REPORT_VERSION, plural },
        kind === 'PolicyReport' ? namespace : undefined,
      );
      // Names only, a page at a time: a report's results can weigh a megabyte, and a cluster holds hundreds.
      const pages = pagedList(kubeConfig, path, {
        limit: EXISTING_PAGE_SIZE,
        labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
        fieldSelector: `metadata.name=${ADMISSION_POLICY_REPORT_NAME}`,
        metadataOnly: true,
        resumeExpired: true,
      });
      for await (const { items } of pages) {
        for (const item of items) {
          const metadata = (item.metadata ?? {}) as { name?: string; namespace?: string };
          if (metadata.name === ADMISSION_POLICY_REPORT_NAME)
            existing.push({ kind, metadata: { name: metadata.name, namespace: metadata.namespace } });
        }
      }
    }
  } catch (error) {
    if (isNotFound(error)) throw new PolicyReportCrdMissing();
    throw error;
  }
  const written: string[] = [];
  const skipped: string[] = [];
  for (const report of reports) {
    try {
      await retryWhenBusy(() =>
        objects.patch(report, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply),
      );
      written.push(describe(report));
    } catch (error) {
      if (report.kind !== 'PolicyReport' || !namespaceGone(error)) throw error;
      skipped.push(describe(report));
    }
  }
  const kept = new Set(written);
  const deleted: string[] = [];
  for (const stale of existing) {
    if (kept.has(describe(stale))) continue;
    try {
      await retryWhenBusy(() =>
        objects.delete({
          apiVersion: `${POLICY_REPORT_GROUP}/${POLICY_REPORT_VERSION}`,
          kind: stale.kind,
          metadata: stale.metadata,
        }),
      );
      deleted.push(describe(stale));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  return { written, deleted, skipped };
}
