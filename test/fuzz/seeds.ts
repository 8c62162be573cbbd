/**
 * Valid AdmissionReview requests for every webhook path: each webhook's own, from its folder
 * (webhook/webhooks/<name>/examples.ts, built from ./seed-kit.ts), each with the places ("hot
 * spots") where hostile values hurt most.
 */
import { WEBHOOKS } from '../../webhook/webhooks/index.js';
import { webhookExamples } from '../harness/webhook-examples.js';
import type { Seed } from './seed-kit.js';

export type { HotKind, HotSpot, Seed } from './seed-kit.js';

/**
 * The order the corpus had before the seeds moved into the folders, so a case's number (`--case
 * K`, a recorded `--seed`) still picks the same review; webhooks not named here follow in the
 * table's order.
 */
const CORPUS_ORDER: readonly string[] = [
  'mutate-pod',
  'validate-pod',
  'validate-pod-resize',
  'mutate-pod-gpu-class',
  'mutate-node-status',
  'validate-node',
  'mutate-elasticquota',
  'validate-elasticquota',
  'mutate-reservation',
  'validate-configmap',
  'mutate-modelbooster',
  'validate-modelbooster',
  'mutate-autoscalingpolicy',
  'validate-autoscalingpolicy',
  'validate-modelserving',
  'validate-modelroute',
  'validate-modelserver',
];

let cached: Seed[] | undefined;

/** Every seed, in a fixed order (a case's seed is chosen by index into this list). */
export function seeds(): readonly Seed[] {
  const rank = (name: string): number => {
    const at = CORPUS_ORDER.indexOf(name);
    return at < 0 ? CORPUS_ORDER.length : at;
  };
  // A stable sort: webhooks outside CORPUS_ORDER keep the table's order.
  cached ??= [...WEBHOOKS]
    .sort((a, b) => rank(a.name) - rank(b.name))
    .flatMap(({ name }) => webhookExamples(name).seeds());
  return cached;
}
