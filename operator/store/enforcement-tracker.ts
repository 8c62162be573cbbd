/**
 * Keeps each webhook's enforcement (deny, warn, dryrun), and each separately enforced step's, in force. The `enforcement` key of the
 * operator's ConfigMap, when present and valid, replaces the --enforcement flag at run time; an
 * invalid one (it got in while the webhook was down) never does: the last good enforcement stays,
 * and the problem is logged, counted and recorded as an Event on the ConfigMap. Without the key
 * the flag applies again.
 */
import type { Logger } from 'pino';
import {
  actionOfName,
  describeEnforcement,
  ENFORCEMENT_ACTIONS,
  readEnforcement,
  type Enforcement,
} from '../../webhook/enforcement/enforcement.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import { FieldPath } from '../../webhook/rules/shared/field-errors.js';
import { ENFORCEMENT_KEY } from '../../webhook/names.js';
import type { ConfigMapView } from '../../webhook/state.js';
import { configMapTarget, type EventRecorder } from '../kube/events.js';

export class EnforcementTracker {
  private current: Enforcement;
  private seen: string | undefined;

  constructor(
    private readonly fromFlag: Enforcement,
    private readonly webhookNames: readonly string[],
    private readonly logger: Logger,
    private readonly metrics: OperatorMetrics,
    private readonly events: Pick<EventRecorder, 'warning'>,
  ) {
    this.current = fromFlag;
    this.metrics.enforcementConfigValid.set(1);
    this.publish();
  }

  get enforcement(): Enforcement {
    return this.current;
  }

  /** Takes the operator's ConfigMap as the watch last saw it (undefined: it does not exist). */
  observe(configMap: ConfigMapView | undefined): void {
    const text = configMap?.data[ENFORCEMENT_KEY];
    const version = text === undefined ? 'flag' : `rv:${configMap?.resourceVersion ?? ''}`;
    if (version === this.seen) return;
    this.seen = version;
    if (text === undefined || configMap === undefined) {
      this.metrics.enforcementConfigValid.set(1);
      this.apply(
        this.fromFlag,
        'no enforcement key in the operator ConfigMap: the --enforcement flag applies',
      );
      return;
    }
    const read = readEnforcement(text, this.webhookNames, FieldPath.of('data', ENFORCEMENT_KEY));
    if (read.ok) {
      this.metrics.enforcementConfigValid.set(1);
      this.apply(read.value, 'applied the enforcement of the operator ConfigMap');
      return;
    }
    this.metrics.enforcementConfigValid.set(0);
    const errors = read.error.map(String);
    const message = `Ignored an invalid enforcement; the last valid one stays in force: ${errors.join('; ')}`;
    this.logger.error({ errors, resourceVersion: configMap.resourceVersion }, message);
    void this.events.warning(configMapTarget(configMap), 'InvalidEnforcement', message);
  }

  private apply(enforcement: Enforcement, what: string): void {
    const changed = describeEnforcement(enforcement) !== describeEnforcement(this.current);
    this.current = enforcement;
    this.publish();
    if (changed) this.logger.warn({ enforcement: describeEnforcement(enforcement) }, what);
    else this.logger.info({ enforcement: describeEnforcement(enforcement) }, what);
  }

  private publish(): void {
    for (const webhook of this.webhookNames) {
      const action = actionOfName(this.current, webhook);
      for (const candidate of ENFORCEMENT_ACTIONS) {
        this.metrics.enforcement.set({ webhook, action: candidate }, candidate === action ? 1 : 0);
      }
    }
  }
}
