/**
 * Keeps the GPU tier mapping in force. A valid gpu-tier-mapping ConfigMap replaces it; an
 * invalid one (it got in while the webhook was down) never does: the last good mapping stays,
 * and the problem is logged, counted and recorded as an Event on the ConfigMap. Without the
 * ConfigMap, KubeNexus's built-in mapping applies.
 */
import type { Logger } from 'pino';
import {
  DEFAULT_TIER_MAPPING,
  readTierMapping,
  type TierMapping,
} from '../../webhook/rules/kubenexus/tier-mapping.js';
import type { OperatorMetrics } from '../metrics/operator-metrics.js';
import type { ConfigMapView } from '../../webhook/state.js';
import { configMapTarget, type EventRecorder } from '../kube/events.js';

export class TierMappingTracker {
  private current: TierMapping = DEFAULT_TIER_MAPPING;
  private seen: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly metrics: OperatorMetrics,
    private readonly events: EventRecorder,
    private readonly onChange: (mapping: TierMapping) => void,
  ) {}

  get mapping(): TierMapping {
    return this.current;
  }

  /** Takes the ConfigMap as the watch last saw it (undefined: it does not exist). */
  observe(configMap: ConfigMapView | undefined): void {
    const version = configMap ? `rv:${configMap.resourceVersion}` : 'absent';
    if (version === this.seen) return;
    this.seen = version;
    if (!configMap) {
      this.logger.info(
        'no gpu-tier-mapping ConfigMap: the built-in KubeNexus mapping applies (gold→h100, silver→a100, bronze→l4)',
      );
      this.metrics.tierMappingValid.set(1);
      this.apply(DEFAULT_TIER_MAPPING);
      return;
    }
    const result = readTierMapping(configMap.data);
    if (result.ok) {
      this.metrics.tierMappingValid.set(1);
      this.logger.info(
        { tiers: Object.fromEntries(result.value.tiers), resourceVersion: configMap.resourceVersion },
        'applied the gpu-tier-mapping ConfigMap',
      );
      this.apply(result.value);
      return;
    }
    this.metrics.tierMappingValid.set(0);
    this.metrics.tierMappingRejected.inc();
    const errors = result.error.map(String);
    const message = `Ignored an invalid GPU tier mapping; the last valid one stays in force: ${errors.join('; ')}`;
    this.logger.error({ errors, resourceVersion: configMap.resourceVersion }, message);
    void this.events.warning(configMapTarget(configMap), 'InvalidTierMapping', message);
  }

  private apply(mapping: TierMapping): void {
    this.current = mapping;
    this.onChange(mapping);
  }
}
