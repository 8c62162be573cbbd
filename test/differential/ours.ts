/**
 * Our side of the comparison: the operator's own store fed the world's objects the way its
 * watches would feed them (the `admit` command's state loader), and each review judged by the
 * admission server's own reading, deciding and answering code (readReview, decide,
 * admissionResponse), under deny unless told otherwise.
 */
import { pino } from 'pino';
import { loadState } from '../../operator/cli/admit/state.js';
import type { StateStore } from '../../operator/store/state-store.js';
import type { JsonObject } from '../../webhook/admission/types.js';
import { admissionResponse } from '../../webhook/admission/response.js';
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import { NO_DECISION_METRICS } from '../../webhook/metrics/decision-metrics.js';
import { watchedConfigMaps } from '../../webhook/names.js';
import { readReview } from '../../webhook/server/app.js';
import { decide, unreadable } from '../../webhook/server/decide.js';
import { enforceAll } from '../../webhook/enforcement/apply-enforcement.js';
import { readEnforcement } from '../../webhook/enforcement/enforcement.js';
import { FieldPath } from '../../webhook/rules/shared/field-errors.js';
import {
  enabledWebhooks,
  enforceableNames,
  type TableContext,
  type WebhookEntry,
} from '../../webhook/table.js';
import { KOORDINATOR_NAMESPACE } from './vocabulary.js';
import type { World } from './world.js';

const OPERATOR_NAMESPACE = 'admission-system';
const logger = pino({ level: 'silent' });

export class OurWebhooks {
  private readonly byPath: Map<string, WebhookEntry>;
  private readonly configMaps: { namespace: string; name: string }[];

  constructor(featureGates: string) {
    const gates = parseFeatureGates(featureGates);
    this.configMaps = watchedConfigMaps(OPERATOR_NAMESPACE, KOORDINATOR_NAMESPACE, gates);
    const context: TableContext = {
      namespace: OPERATOR_NAMESPACE,
      excludedNamespaces: [],
      tierLabelKey: 'tenant.kubenexus.io/tier',
      gpuResourceNames: ['nvidia.com/gpu'],
      configMaps: this.configMaps,
      koordinatorNamespace: KOORDINATOR_NAMESPACE,
      // The worlds keep every profile's probability at 0 or 100: the roll never decides.
      roll: () => 0,
      gates,
    };
    this.byPath = new Map(enabledWebhooks(context).map((entry) => [entry.path, entry]));
  }

  /** The store, fed the world as its watches would be. */
  async state(world: World): Promise<StateStore> {
    const loaded = await loadState({
      files: world.objects.map((object, document) => ({ object, source: 'world', document })),
      cluster: undefined,
      configMaps: this.configMaps,
      operatorNamespace: OPERATOR_NAMESPACE,
      logger,
    });
    return loaded.store;
  }

  /** The webhook serving `path`. */
  entry(path: string): WebhookEntry {
    const entry = this.byPath.get(path);
    if (!entry) throw new Error(`no webhook of ours serves ${path}`);
    return entry;
  }

  /** The AdmissionReview our server would answer, under `enforcement` (deny everywhere by default). */
  answer(path: string, review: JsonObject, state: StateStore, enforcement = ''): JsonObject {
    const entry = this.entry(path);
    const { request, unread } = readReview(Buffer.from(JSON.stringify(review)));
    const judged = unread
      ? unreadable(entry, unread, NO_DECISION_METRICS)
      : decide(entry, request, state, logger, NO_DECISION_METRICS);
    const read = readEnforcement(enforcement, enforceableNames(), FieldPath.of('enforcement'));
    if (!read.ok) throw new Error(`enforcement ${enforcement}: ${read.error.join('; ')}`);
    const enforced = enforceAll(entry, judged, read.value);
    return admissionResponse(request, enforced.decision, enforced.patch) as unknown as JsonObject;
  }
}
