/**
 * Which custom kinds the state store watches have no CRD installed. They belong to Koordinator's
 * chart (the chart of this operator installs them only on request), and the operator runs
 * without them: a kind whose CRD is absent has no objects, so its rules see none, and every other
 * webhook is served. Its reflector keeps checking and watches the kind once the CRD appears. This
 * says so where admins look: a log line and an Event on the replica's own Pod at each change, the
 * gauge admission_kind_installed, and the readiness report's detail (never a reason to be unready).
 */
import type { Logger } from 'pino';
import type { KindDefinition } from '../../webhook/kinds.js';
import type { EventRecorder } from '../kube/events.js';
import { kindInstallChanged } from '../kube/operator-events.js';

export interface KindPresenceOptions {
  logger: Logger;
  metrics: { kindInstalled: { set(labels: { kind: string }, value: number): void } };
  events?: EventRecorder | undefined;
  /** The replica's own Pod; without it (a caller outside a cluster) no Event is recorded. */
  selfPod?: { namespace: string; name: string } | undefined;
  /**
   * How long changes are gathered before one Event per reason tells them all. The watches start
   * together and find their CRDs absent within milliseconds of each other, and the recorder holds
   * a second Event of a reason for its whole interval (a minute): told one by one, the first
   * Event would name one absent CRD of several for that minute.
   */
  settleMs?: number;
}

const DEFAULT_SETTLE_MS = 1_000;

/** A kind's CRD, as `kubectl get crd` names it. */
export const crdName = (kind: KindDefinition): string => `${kind.plural}.${kind.group}`;

export class KindPresence {
  /** The CRDs found absent, by the watch's name (the metrics' `kind`). */
  private readonly absent = new Map<string, string>();
  /** Watches whose CRD has been found either way at least once. */
  private readonly known = new Set<string>();
  /** The CRDs that changed since the last Events, by the change (appeared true, found absent false). */
  private readonly changed = new Map<string, boolean>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: KindPresenceOptions) {}

  /** The watch `watch` of `kind` found its CRD served (true) or absent (false), a change since last time. */
  observe(watch: string, kind: KindDefinition, installed: boolean): void {
    const { logger, metrics, events, selfPod } = this.options;
    const crd = crdName(kind);
    const first = !this.known.has(watch);
    this.known.add(watch);
    metrics.kindInstalled.set({ kind: watch }, installed ? 1 : 0);
    if (installed) {
      const wasAbsent = this.absent.delete(watch);
      // Installed from the start is the ordinary case: the gauge says it, nothing else needs to.
      if (first || !wasAbsent) return;
      logger.info({ kind: watch, crd }, 'CRD installed; watching its objects');
    } else {
      this.absent.set(watch, crd);
      logger.info(
        { kind: watch, crd },
        'CRD not installed; its rules see no objects of it until it appears, and every other webhook is served',
      );
    }
    if (!selfPod || !events) return;
    this.changed.set(crd, installed);
    this.timer ??= setTimeout(() => {
      this.tell();
    }, this.options.settleMs ?? DEFAULT_SETTLE_MS).unref();
  }

  /** One Event per reason for the changes gathered, each naming every CRD absent now. */
  private tell(): void {
    this.timer = undefined;
    const { events, selfPod } = this.options;
    const appeared = [...this.changed].filter(([, installed]) => installed).map(([crd]) => crd);
    const vanished = [...this.changed].filter(([, installed]) => !installed).map(([crd]) => crd);
    this.changed.clear();
    if (!selfPod) return;
    const missing = this.missing();
    if (vanished.length > 0) kindInstallChanged(events, selfPod, vanished.sort(), false, missing);
    if (appeared.length > 0) kindInstallChanged(events, selfPod, appeared.sort(), true, missing);
  }

  /** Stops gathering: changes not yet told are dropped with the replica. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.changed.clear();
  }

  /** The CRDs of watched kinds found absent, sorted. */
  missing(): string[] {
    return [...new Set(this.absent.values())].sort();
  }
}
