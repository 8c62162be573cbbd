/**
 * The Events the operator records about what it does, one function per occasion, so their
 * reasons stay few and searchable (`kubectl get events --field-selector reason=<reason>`):
 *
 *   CertificateIssued       Secret      a CA or serving certificate issued into a new or taken-over Secret
 *   CertificateRotated      Secret      a CA or serving certificate renewed in place
 *   CertificateRestored     Secret      a deleted Secret written back from what the replica serves
 *   WebhookConfigurationRepaired   Mutating/ValidatingWebhookConfiguration   drift undone, naming the last writer
 *   InvalidTierMapping      ConfigMap   an invalid gpu-tier-mapping ignored (operator/store/tier-mapping-tracker.ts)
 *   LeaderElection          Lease       a replica became the leader
 *   WatchReplaced           Pod         a watch heard nothing for the silence bound and was replaced (the replica's own Pod)
 *   KindNotInstalled        Pod         the CRD of a watched kind was found absent (the replica's own Pod)
 *   KindInstalled           Pod         the CRD of a watched kind appeared and is now watched (the replica's own Pod)
 */
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { MAX_LOG_FIELD_CHARS, truncate } from '../../webhook/util/bounded-text.js';
import type { EventRecorder, EventTarget } from './events.js';
import { FIELD_MANAGER } from './leader-election.js';

const EVENT_REASONS = {
  certificateIssued: 'CertificateIssued',
  certificateRotated: 'CertificateRotated',
  certificateRestored: 'CertificateRestored',
  configurationRepaired: 'WebhookConfigurationRepaired',
  invalidTierMapping: 'InvalidTierMapping',
  leaderElection: 'LeaderElection',
  watchReplaced: 'WatchReplaced',
  kindNotInstalled: 'KindNotInstalled',
  kindInstalled: 'KindInstalled',
} as const;

/** What the certificate manager wrote (the fields of its write plan that Events tell). */
export interface CertificateWrite {
  mode: 'create' | 'update' | 'recreate';
  issued: readonly ('ca' | 'serving')[];
  reasons: readonly string[];
}

/** Records why the webhook-tls Secret was written; a write that issued nothing new records nothing. */
export function certificateWritten(
  events: EventRecorder | undefined,
  secret: { namespace: string; name: string },
  write: CertificateWrite,
): void {
  if (!events) return;
  const why = write.reasons.join('; ');
  const target = { apiVersion: 'v1', kind: 'Secret', namespace: secret.namespace, name: secret.name };
  if (write.issued.length === 0) {
    if (write.mode === 'create') {
      void events.warning(
        target,
        EVENT_REASONS.certificateRestored,
        `Restored the Secret from the certificates this replica serves: ${why}`,
      );
    }
    return;
  }
  const issued = write.issued.map((kind) => (kind === 'ca' ? 'CA' : 'serving certificate')).join(' and ');
  const reason = write.mode === 'update' ? EVENT_REASONS.certificateRotated : EVENT_REASONS.certificateIssued;
  void events.normal(target, reason, `Issued a new ${issued}: ${why}`);
}

/** The managers of the latest change recorded in `managedFields` (who last wrote the object). */
function lastWriters(managedFields: readonly V1ManagedFieldsEntry[] | undefined): string[] {
  const entries = managedFields ?? [];
  const time = (entry: V1ManagedFieldsEntry): number =>
    entry.time ? new Date(entry.time).getTime() : Number.NEGATIVE_INFINITY;
  const latest = Math.max(...entries.map(time));
  return [
    ...new Set(
      entries
        .filter((entry) => time(entry) === latest)
        .map((entry) => truncate(entry.manager ?? 'unknown', MAX_LOG_FIELD_CHARS)),
    ),
  ];
}

/** Records a repaired webhook configuration, naming the field that drifted and who last wrote it. */
export function configurationRepaired(
  events: EventRecorder | undefined,
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
  before: {
    metadata?: { name?: string; uid?: string; managedFields?: V1ManagedFieldsEntry[] };
  },
  drift: string,
  alsoOn?: EventTarget,
): void {
  if (!events) return;
  const writers = lastWriters(before.metadata?.managedFields);
  // Our own last write being replaced (a new CA bundle, a new table) undoes nobody's change; an
  // Event for it would also hide, in the recorder's once-a-minute slot, a real repair just before.
  const others = writers.filter((writer) => writer !== FIELD_MANAGER);
  if (writers.length > 0 && others.length === 0) return;
  // managedFields keeps whole seconds: an edit in the same second as our own write lists both,
  // and ours is not the change being undone.
  const by = others.length > 0 ? `; last changed by ${others.join(', ')}` : '';
  const name = before.metadata?.name ?? 'admission-operator';
  void events.warning(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      name,
      ...(before.metadata?.uid ? { uid: before.metadata.uid } : {}),
    },
    EVENT_REASONS.configurationRepaired,
    `Repaired ${truncate(drift, MAX_LOG_FIELD_CHARS)}${by}`,
  );
  // Events about a cluster-scoped configuration live in `default`; the same line in the
  // operator's namespace is where its admins look.
  if (alsoOn) {
    void events.warning(
      alsoOn,
      EVENT_REASONS.configurationRepaired,
      `Repaired ${kind} ${name}: ${truncate(drift, MAX_LOG_FIELD_CHARS)}${by}`,
    );
  }
}

/** Records on the Lease that `identity` (a replica) became the leader. */
export function leaderElected(
  events: EventRecorder | undefined,
  lease: { namespace: string; name: string; uid?: string },
  identity: string,
): void {
  if (!events) return;
  void events.normal(
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: lease.namespace,
      name: lease.name,
      ...(lease.uid ? { uid: lease.uid } : {}),
    },
    EVENT_REASONS.leaderElection,
    `${truncate(identity, MAX_LOG_FIELD_CHARS)} became leader`,
  );
}

/**
 * Records on the replica's own Pod that the watch of `kind` went silent and was replaced: the
 * state the rules read was stale meanwhile (docs/runbooks/AdmissionWatchStale.md).
 */
export function watchReplaced(
  events: EventRecorder | undefined,
  pod: { namespace: string; name: string },
  kind: string,
  silentMs: number,
): void {
  if (!events) return;
  void events.warning(
    { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name },
    EVENT_REASONS.watchReplaced,
    `The ${truncate(kind, MAX_LOG_FIELD_CHARS)} watch heard nothing from the API server for ` +
      `${Math.round(silentMs / 1000)} s; replaced it, resuming where it was`,
  );
}

/** Where a replica tells of its watches replaced for silence. */
export interface WatchSilenceReport {
  metrics: { watchReplacements: { inc(labels: { kind: string }): void } };
  events?: EventRecorder | undefined;
  /** The replica's own Pod; without it (a caller outside a cluster) nothing is recorded. */
  selfPod?: { namespace: string; name: string } | undefined;
}

/**
 * What every watch of the replica does when it is replaced for silence, the store's reflectors
 * and the informers (the Secret's and the configurations') alike: counted by kind, and recorded
 * as a WatchReplaced Event on the replica's Pod.
 */
export function watchSilenceHandler(report: WatchSilenceReport): (kind: string, silentMs: number) => void {
  return (kind, silentMs) => {
    report.metrics.watchReplacements.inc({ kind });
    if (report.selfPod) watchReplaced(report.events, report.selfPod, kind, silentMs);
  };
}

/**
 * Records on the replica's own Pod that the CRDs `crds` were found absent (installed false) or
 * appeared. Every message names all the CRDs absent now: Events of one reason written within the
 * recorder's interval keep the last message only, and it must still be the whole story.
 */
export function kindInstallChanged(
  events: EventRecorder | undefined,
  pod: { namespace: string; name: string },
  crds: readonly string[],
  installed: boolean,
  absent: readonly string[],
): void {
  if (!events || crds.length === 0) return;
  const target = { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name };
  const still =
    absent.length === 0 ? 'every watched kind is installed' : `not installed: ${absent.join(', ')}`;
  const [subject, verb] =
    crds.length === 1 ? [`The CRD ${crds.join('')}`, 'is'] : [`The CRDs ${crds.join(', ')}`, 'are'];
  if (installed) {
    void events.normal(
      target,
      EVENT_REASONS.kindInstalled,
      `${subject} appeared; ${crds.length === 1 ? 'its' : 'their'} objects are watched and ` +
        `${crds.length === 1 ? 'its' : 'their'} rules apply (${still})`,
    );
    return;
  }
  void events.normal(
    target,
    EVENT_REASONS.kindNotInstalled,
    `${subject} ${verb} not installed: the rules see no objects of ${crds.length === 1 ? 'its kind' : 'their kinds'} ` +
      `until ${crds.length === 1 ? 'it appears' : 'they appear'}, and every other webhook is served (${still})`,
  );
}
