/**
 * The pod a workload's controller would create from its template, so `--expand-workloads` can
 * send it through the pod webhooks before the workload is applied: the template's metadata and
 * spec, the workload's namespace, and the name and labels the controller adds (ReplicaSets of a
 * Deployment `web` are `web-<hash>` and name their pods `web-<hash>-xxxxx`; a StatefulSet's first
 * pod is `<name>-0`; a Job's pods carry `job-name`).
 */
import type { JsonObject, JsonValue, KubeObject } from '../../../webhook/admission/types.js';
import { asObject } from '../../../webhook/util/json.js';
import { failure, success, type Result } from '../../../webhook/util/result.js';
import { apiVersionOf, kindOf } from './manifests.js';

/** The kinds expanded, with where their pod template sits. */
const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  'apps/Deployment': ['spec', 'template'],
  'apps/StatefulSet': ['spec', 'template'],
  'apps/DaemonSet': ['spec', 'template'],
  'apps/ReplicaSet': ['spec', 'template'],
  'batch/Job': ['spec', 'template'],
  'batch/CronJob': ['spec', 'jobTemplate', 'spec', 'template'],
};

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** apimachinery's SafeEncodeString of an FNV-32a hash: how controllers spell template hashes. */
function templateHash(template: JsonValue): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(JSON.stringify(template))) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return [...String(hash)].map((digit) => SAFE_ALPHABET[Number(digit)] ?? 'b').join('');
}

function groupOf(text: string): string {
  return text.includes('/') ? text.slice(0, text.indexOf('/')) : '';
}

/** Whether `object` is a workload `--expand-workloads` expands. */
export function isWorkload(object: KubeObject): boolean {
  return Object.hasOwn(TEMPLATE_PATHS, `${groupOf(apiVersionOf(object))}/${kindOf(object)}`);
}

/** The pod `workload` would create in `namespace`, or why it has none. */
export function podOfWorkload(
  workload: KubeObject,
  namespace: string,
  now: Date = new Date(),
): Result<KubeObject> {
  const kind = kindOf(workload);
  const path = TEMPLATE_PATHS[`${groupOf(apiVersionOf(workload))}/${kind}`];
  if (!path) return failure(`${kind} is not a workload`);
  let template: JsonValue | undefined = workload;
  for (const key of path) template = asObject(template)?.[key];
  const templateObject = asObject(template);
  if (!templateObject) return failure(`${path.join('.')}: Required value: the pod template`);
  const metadata: JsonObject = { ...(asObject(templateObject.metadata) ?? {}) };
  const labels: Record<string, JsonValue> = { ...(asObject(metadata.labels) ?? {}) };
  const name = typeof workload.metadata.name === 'string' ? workload.metadata.name : '';
  const hash = templateHash(templateObject);
  delete metadata.name;
  delete metadata.generateName;
  switch (kind) {
    case 'Deployment':
      labels['pod-template-hash'] = hash;
      metadata.generateName = `${name}-${hash}-`;
      break;
    case 'StatefulSet':
      metadata.name = `${name}-0`;
      labels['controller-revision-hash'] = `${name}-${hash}`;
      labels['statefulset.kubernetes.io/pod-name'] = `${name}-0`;
      labels['apps.kubernetes.io/pod-index'] = '0';
      break;
    case 'DaemonSet':
      metadata.generateName = `${name}-`;
      labels['controller-revision-hash'] = hash;
      labels['pod-template-generation'] = '1';
      break;
    case 'ReplicaSet':
      metadata.generateName = `${name}-`;
      break;
    case 'Job':
    case 'CronJob': {
      // A CronJob's Job is named after its scheduled time in minutes.
      const job = kind === 'CronJob' ? `${name}-${Math.floor(now.getTime() / 60_000)}` : name;
      metadata.generateName = `${job}-`;
      labels['batch.kubernetes.io/job-name'] = job;
      labels['job-name'] = job;
      break;
    }
  }
  metadata.namespace = namespace;
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  return success({ apiVersion: 'v1', kind: 'Pod', metadata, spec: templateObject.spec ?? {} });
}
