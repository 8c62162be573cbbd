/**
 * The audit: every existing object the rules judge, sent through the same admission chain as
 * `admit` (the operator's table, selectors, match conditions, mutating then validating), as if it
 * were created now, and reported when a webhook would refuse it or change it.
 *
 * Two things make "as if created now" fair to an object that already exists: the fields the API
 * server sets itself (uid, resourceVersion, status...) are removed first, as they would be absent
 * from a create; and a pod's own requests are taken out of its quota's usage, which the pod watch
 * already counts, so a pod is judged against the other pods only. ElasticQuotas are judged by
 * what their pods use: Koordinator's quota checks judge a change to the tree, which an existing
 * quota is not, so a quota is reported when its pods use more than its max.
 *
 * The work yields to the event loop every few objects: inside the operator, admission reviews
 * keep being answered while an audit runs.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import { formatQuantity, parseQuantity } from '../../webhook/util/quantity.js';
import type { StateSnapshot } from '../../webhook/state.js';
import { MAX_MESSAGE_CHARS, truncate } from '../../webhook/util/bounded-text.js';
import { own } from '../../webhook/util/own.js';
import type { ChainContext } from '../../webhook/chain/chain-context.js';
import { runChain, type Verdict } from '../../webhook/chain/run-chain.js';
import type { StateStore } from '../store/state-store.js';
import { auditedKindName, auditedPages, type AuditedKind, type AuditScope } from './audited-objects.js';

export interface AuditFinding {
  /**
   * The webhook that would refuse or change the object (short name), the step of one
   * (`validate-pod/colocation`) that would refuse it, or `quota-usage`.
   */
  webhook: string;
  outcome: 'refused' | 'changed';
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
  uid: string | undefined;
  /** The refusal, or what the patch would change (JSON pointers). */
  message: string;
}

/** Where a finding or a judgement is about. */
export interface AuditedObject {
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
  uid: string | undefined;
}

/** What one webhook made of one object: `passed` when it admitted it unchanged. */
export interface AuditJudgement {
  webhook: string;
  /** A mutating webhook's judgement: whether it would change the object, more than admit it. */
  mutating: boolean;
  outcome: AuditFinding['outcome'] | 'passed';
  message: string;
}

export interface AuditReport {
  findings: AuditFinding[];
  /** Objects judged, by kind. */
  judged: Record<string, number>;
  /**
   * Objects the cluster holds in the audit's scope, by kind, as the API server counted them: equal
   * to `judged`, or the audit fails (AuditIncomplete) rather than report on part of the cluster.
   */
  held: Record<string, number>;
  /**
   * Kinds whose list went on from a newer snapshot after its first one expired: every object was
   * judged, but those created or deleted meanwhile may be missing or extra.
   */
  resumed: string[];
  /** Kinds the cluster does not serve, and why. */
  skipped: string[];
  /** Findings beyond MAX_FINDINGS, counted but not kept. */
  dropped: number;
}

/** Findings kept in a report: a cluster where everything fails still gets a bounded answer. */
export const MAX_FINDINGS = 10_000;
/** Objects judged between two yields to the event loop. */
const BATCH = 20;
/** Paths of one change listed in a finding. */
const MAX_CHANGED_PATHS = 10;

const SERVER_SET_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'managedFields',
  'selfLink',
];

/** The object as a create would carry it: without what the API server sets. */
function asCreated(object: KubeObject): KubeObject {
  // A JSON round trip: the client's typed objects carry Dates, and the chain patches in place.
  const copy = JSON.parse(JSON.stringify(object)) as KubeObject;
  const metadata: JsonObject = { ...copy.metadata };
  for (const field of SERVER_SET_METADATA) Reflect.deleteProperty(metadata, field);
  const { status: _status, ...rest } = copy;
  return { ...rest, metadata };
}

/** The store as the chain reads it for `pod`, with the pod's own usage taken out of its quota. */
function withoutOwnUsage(store: StateStore, podKey: string): StateSnapshot {
  const own = store.podQuotaUsage(podKey);
  if (!own) return store;
  return new Proxy(store, {
    get(target, property): unknown {
      if (property === 'quotaUsed') {
        return (quota: string): ReadonlyMap<string, bigint> => {
          const used = target.quotaUsed(quota);
          if (quota !== own.quota) return used;
          const rest = new Map(used);
          for (const [resource, amount] of own.requests)
            rest.set(resource, (rest.get(resource) ?? 0n) - amount);
          return rest;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

export interface AuditOptions {
  kubeConfig: KubeConfig;
  store: StateStore;
  chainContext: () => ChainContext;
  configMaps: readonly { namespace: string; name: string }[];
  /** Everything when omitted. */
  scope?: AuditScope;
  /** Objects per list request (DEFAULT_CHUNK_SIZE when omitted). */
  chunkSize?: number | undefined;
  /** Receives every judged object with each webhook's judgement (PolicyReports count the passes too). */
  onJudged?: (object: AuditedObject, judgements: readonly AuditJudgement[]) => void;
}

export async function runAudit({
  kubeConfig,
  store,
  chainContext,
  configMaps,
  scope,
  chunkSize,
  onJudged,
}: AuditOptions): Promise<AuditReport> {
  const report: AuditReport = { findings: [], judged: {}, held: {}, resumed: [], skipped: [], dropped: 0 };
  const add = (finding: AuditFinding): void => {
    if (report.findings.length < MAX_FINDINGS) {
      report.findings.push({ ...finding, message: truncate(finding.message, MAX_MESSAGE_CHARS) });
    } else report.dropped += 1;
  };
  const skipped = (kind: AuditedKind, why: string): void => {
    report.skipped.push(`${auditedKindName(kind)}: ${why}`);
  };
  let sinceYield = 0;
  const pages = auditedPages(kubeConfig, configMaps, skipped, scope, chunkSize);
  for await (const { kind, objects, held, resumed } of pages) {
    const kindName = auditedKindName(kind);
    if (resumed && !report.resumed.includes(kindName)) report.resumed.push(kindName);
    for (const object of objects) {
      if (++sinceYield >= BATCH) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
      report.judged[kindName] = (report.judged[kindName] ?? 0) + 1;
      const namespace = kind.scope === 'Namespaced' ? text(object.metadata.namespace) : undefined;
      const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
      const name = text(object.metadata.name) ?? '';
      const uid = text(object.metadata.uid);
      const where: AuditedObject = { apiVersion, kind: kind.kind, namespace, name, uid };
      const judgements =
        kind.kind === 'ElasticQuota'
          ? quotaJudgements(store, name)
          : chainJudgements(
              runChain(
                {
                  kind: { group: kind.group, version: kind.version, kind: kind.kind },
                  resource: { group: kind.group, version: kind.version, resource: kind.plural },
                  namespaced: kind.scope === 'Namespaced',
                  namespace,
                  operation: 'CREATE',
                  object: asCreated(object),
                  oldObject: null,
                },
                kind.kind === 'Pod' && namespace
                  ? { ...chainContext(), state: withoutOwnUsage(store, `${namespace}/${name}`) }
                  : chainContext(),
              ),
            );
      for (const { webhook, outcome, message } of judgements) {
        if (outcome !== 'passed') add({ webhook, outcome, ...where, message });
      }
      onJudged?.(where, judgements);
    }
    if (held !== undefined && held > 0) report.held[kindName] = held;
  }
  const unequal = Object.keys({ ...report.held, ...report.judged }).filter(
    (kind) => report.held[kind] !== report.judged[kind],
  );
  if (unequal.length > 0) {
    throw new AuditIncomplete(
      unequal
        .map(
          (kind) =>
            `${kind}: the cluster holds ${report.held[kind] ?? 'an unknown number'}, ${report.judged[kind] ?? 0} judged`,
        )
        .join('; '),
    );
  }
  return report;
}

/** The audit did not judge every object the cluster holds in its scope: it reports nothing. */
export class AuditIncomplete extends Error {
  override name = 'AuditIncomplete';
}

/**
 * Each webhook's judgement of one object: the refusal, what each mutating webhook's first call
 * would change, and a pass for every other webhook that was called.
 */
function chainJudgements(verdict: Verdict): AuditJudgement[] {
  const judgements: AuditJudgement[] = [];
  if (verdict.denial) {
    const { webhook, message, step } = verdict.denial;
    const mutating = verdict.calls.some((call) => call.webhook === webhook && call.type === 'mutating');
    // A refusal by a step enforced apart from its webhook is reported under the step's name
    // (`validate-pod/colocation`), so an admin sees what setting that step to deny would refuse.
    judgements.push({ webhook: step ?? webhook, mutating, outcome: 'refused', message });
  }
  for (const call of verdict.calls) {
    if (call.round !== 1 || call.webhook === verdict.denial?.webhook) continue;
    if (call.type !== 'mutating' || call.patch.length === 0) {
      if (call.allowed) {
        const mutating = call.type === 'mutating';
        judgements.push({ webhook: call.webhook, mutating, outcome: 'passed', message: '' });
      }
      continue;
    }
    const paths = call.patch
      .slice(0, MAX_CHANGED_PATHS)
      .map((operation) => `${operation.op} ${operation.path}`);
    const more =
      call.patch.length > MAX_CHANGED_PATHS ? ` and ${call.patch.length - MAX_CHANGED_PATHS} more` : '';
    const message = `${paths.join(', ')}${more}`;
    judgements.push({ webhook: call.webhook, mutating: true, outcome: 'changed', message });
  }
  return judgements;
}

function quotaJudgements(store: StateStore, name: string): AuditJudgement[] {
  const over = quotaOverUse(store, name);
  return [
    over
      ? { webhook: 'quota-usage', mutating: false, outcome: 'refused', message: over }
      : { webhook: 'quota-usage', mutating: false, outcome: 'passed', message: '' },
  ];
}

/** Why a quota's pods use more than its max, or undefined when they do not. */
function quotaOverUse(store: StateStore, name: string): string | undefined {
  const quota = store.elasticQuota(name);
  if (!quota) return undefined;
  const used = store.quotaUsed(name);
  const over: string[] = [];
  for (const [resource, amount] of used) {
    const written = own(quota.max, resource);
    if (written === undefined) continue;
    let max: bigint;
    try {
      max = parseQuantity(written);
    } catch {
      // An unreadable max is the quota webhook's to refuse; the audit has nothing to compare.
      continue;
    }
    if (amount > max) over.push(`${resource}: used ${formatQuantity(amount, written)} > max ${written}`);
  }
  return over.length > 0 ? `the quota's pods use more than its max: ${over.sort().join(', ')}` : undefined;
}
