/**
 * The variables the API server would bind when it evaluates a match condition, for the kinds the
 * webhooks' conditions are registered for: pods and ConfigMaps for each operation, in the shapes
 * that decide them (labels present, absent, null; resources in requests, limits, init
 * containers, or nowhere). A webhook's examples.ts names which of these its conditions read.
 */
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import { DEFAULT_GPU_RESOURCE_NAMES, watchedConfigMaps } from '../../webhook/names.js';

/** JSON as CEL sees it in `object`, `oldObject` and `request`. */
export type CelJson = null | boolean | number | string | CelJson[] | { [key: string]: CelJson };

type JsonMap = { [key: string]: CelJson };

const asMap = (value: CelJson | undefined): JsonMap | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;

/** The value at `path` under `value`, undefined where any step is missing. */
export const field = (value: CelJson | undefined, ...path: string[]): CelJson | undefined =>
  path.reduce<CelJson | undefined>((current, key) => asMap(current)?.[key], value);

/** A type, not an interface: it must fit the evaluator's variables record. */
export type ConditionVariables = { object: CelJson; oldObject: CelJson; request: CelJson };

/** The GPU resource lists the table is built under (and the inputs request). */
export const GPU_RESOURCE_LISTS: readonly (readonly string[])[] = [
  [],
  DEFAULT_GPU_RESOURCE_NAMES,
  ['nvidia.com/gpu'],
  ['example.com/accelerator', 'nvidia.com/mig-1g.5gb', 'amd.com/gpu', 'koordinator.sh/gpu-core'],
];

const OPT_IN = 'pod.koordinator.sh/mutating-update';
const LABELS: readonly (CelJson | undefined)[] = [
  undefined,
  null,
  {},
  { app: 'web' },
  { [OPT_IN]: 'true' },
  { [OPT_IN]: 'false' },
  { [OPT_IN]: 'True', app: 'web' },
];

const container = (name: string, resources?: CelJson): CelJson =>
  resources === undefined ? { name, image: 'busybox' } : { name, image: 'busybox', resources };

/** Container lists in the shapes requests-gpu distinguishes, over every GPU resource name used above. */
function containerLists(): CelJson[][] {
  const gpuNames = [...new Set(GPU_RESOURCE_LISTS.flat())];
  const lists: CelJson[][] = [
    [],
    [container('plain')],
    [container('empty', {})],
    [container('null', null)],
    [container('null-requests', { requests: null, limits: null })],
    [container('cpu', { requests: { cpu: '1' }, limits: { memory: '1Gi' } })],
    [container('lookalike', { requests: { 'nvidia.com/gpu-memory': '1', gpu: '1' } })],
  ];
  for (const name of gpuNames) {
    lists.push([container('requests', { requests: { cpu: '1', [name]: '1' } })]);
    lists.push([container('limits', { limits: { [name]: '2' } })]);
    lists.push([container('first'), container('second', { requests: {}, limits: { [name]: '1' } })]);
  }
  return lists;
}

function pod(labels: CelJson | undefined, containers: CelJson[], initContainers?: CelJson): CelJson {
  const metadata: { [key: string]: CelJson } = { name: 'p', namespace: 'team-a' };
  if (labels !== undefined) metadata.labels = labels;
  const spec: { [key: string]: CelJson } = { containers };
  if (initContainers !== undefined) spec.initContainers = initContainers;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

function pods(): CelJson[] {
  const out: CelJson[] = [];
  const lists = containerLists();
  const gpuInit = [container('init', { limits: { 'nvidia.com/gpu': '1' } })];
  for (const labels of LABELS) {
    for (const containers of lists) out.push(pod(labels, containers));
    for (const initContainers of [null, [], [container('init')], gpuInit])
      out.push(pod(labels, [container('main')], initContainers));
  }
  // No containers field at all: selecting it errs, which the conditions must surface, not hide.
  out.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} });
  return out;
}

function request(
  resource: string,
  kind: string,
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  namespace: string,
  name: string,
): CelJson {
  return {
    uid: '00000000-0000-0000-0000-000000000000',
    kind: { group: '', version: 'v1', kind },
    resource: { group: '', version: 'v1', resource },
    name,
    namespace,
    operation,
    userInfo: { username: 'someone' },
    dryRun: false,
    options: {
      apiVersion: 'meta.k8s.io/v1',
      kind: `${operation[0]}${operation.slice(1).toLowerCase()}Options`,
    },
  };
}

/** The variables for each pod write: CREATE with no old object, UPDATE from an unlabelled pod. */
export function podInputs(): ConditionVariables[] {
  return pods().flatMap((object) => [
    { object, oldObject: null, request: request('pods', 'Pod', 'CREATE', 'team-a', 'p') },
    { object, oldObject: pod(undefined, []), request: request('pods', 'Pod', 'UPDATE', 'team-a', 'p') },
  ]);
}

/** ConfigMap writes and deletes, named like the watched ones, in their namespaces and others; unnamed under generateName. */
export function configMapInputs(): ConditionVariables[] {
  const namespaces = ['admission-system', 'koordinator-system', 'shared', 'team-a', ''];
  const names = [
    ...new Set(
      watchedConfigMaps('x', 'x', parseFeatureGates('EnablePodEnhancedValidator=true')).map(
        ({ name }) => name,
      ),
    ),
    'unrelated',
    '',
  ];
  const out: ConditionVariables[] = [];
  for (const namespace of namespaces) {
    for (const name of names) {
      const object: CelJson = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace },
        data: {},
      };
      out.push(
        { object, oldObject: null, request: request('configmaps', 'ConfigMap', 'CREATE', namespace, name) },
        { object, oldObject: object, request: request('configmaps', 'ConfigMap', 'UPDATE', namespace, name) },
        // DELETE binds a null object, as the API server does.
        {
          object: null,
          oldObject: object,
          request: request('configmaps', 'ConfigMap', 'DELETE', namespace, name),
        },
      );
    }
  }
  return out;
}
