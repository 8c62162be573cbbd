/**
 * Every webhook path in process: the fuzz corpus's valid review of each path (its seeds) judged
 * as the server judges it (rule, recovery, patch), in nanoseconds per review, and as a multiple
 * of JSON.parse of the same review's text measured in the same run, so a figure compares across
 * runs and machines. The HTTPS suites cover the pod paths only; this covers them all.
 */
import { pino } from 'pino';
import { parseAdmissionReview } from '../../webhook/admission/review.js';
import { NO_DECISION_METRICS } from '../../webhook/metrics/decision-metrics.js';
import { decide } from '../../webhook/server/decide.js';
import { shortName } from '../../webhook/table.js';
import { seeds } from '../fuzz/seeds.js';
import { fuzzState, fuzzWebhooks } from '../fuzz/world.js';
import { inform } from './report.js';
import { microsPerCall } from './steps.js';

export function benchPaths(): void {
  const webhooks = fuzzWebhooks();
  const state = fuzzState();
  const logger = pino({ level: 'silent' });
  for (const seed of seeds()) {
    const entry = webhooks.find((webhook) => webhook.path === seed.path);
    if (!entry) throw new Error(`no webhook serves the seed's path ${seed.path}`);
    const text = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'bench', ...seed.request },
    });
    const request = parseAdmissionReview(JSON.parse(text));
    const micros = microsPerCall(() => decide(entry, request, state, logger, NO_DECISION_METRICS));
    const parse = microsPerCall(() => JSON.parse(text));
    const name = `paths: ${shortName(entry.name)}, ${seed.label}`.slice(0, 56);
    inform(name, micros * 1000, 'ns/review');
    inform(`${name}, ÷ parse`, micros / parse, '×');
  }
}
