import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, JsonValue } from '../../../../webhook/admission/types.js';
import {
  POD_PATCH_SCHEMA,
  StrategicMergePatchError,
  embedPodSchema,
  strategicMergePatch,
  type PatchSchema,
} from '../../../../webhook/util/strategic-merge-patch.js';

function deepFreeze<T extends JsonValue>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** Frozen inputs make any attempt to change them throw, so every case also checks purity. */
function patchPod(pod: JsonObject, patch: JsonValue): JsonObject {
  return strategicMergePatch(
    deepFreeze(structuredClone(pod)),
    deepFreeze(structuredClone(patch)),
    POD_PATCH_SCHEMA,
  );
}

function pod(spec: JsonObject, metadata: JsonObject = { name: 'p', namespace: 'default' }): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

function names(list: JsonValue | undefined): JsonValue[] {
  assert.ok(Array.isArray(list));
  return list.map((item) =>
    typeof item === 'object' && item !== null && !Array.isArray(item) ? item.name! : item,
  );
}

function rejects(original: JsonObject, patch: JsonValue, path: string, reason: RegExp): void {
  assert.throws(
    () => patchPod(original, patch),
    (error: unknown) => {
      assert.ok(error instanceof StrategicMergePatchError);
      assert.equal(error.path, path);
      assert.ok(error.message.includes(`at ${path === '' ? '(root)' : path}:`), error.message);
      assert.match(error.message, reason);
      return true;
    },
  );
}

describe('strategicMergePatch: maps', () => {
  it('applies the Koordinator ClusterColocationProfile test patch (labels and annotations merge)', () => {
    const original = pod(
      {
        containers: [{ name: 'test-container-a', resources: { limits: { cpu: '1', memory: '4Gi' } } }],
        schedulerName: 'nonExistSchedulerName',
      },
      { namespace: 'default', name: 'test-pod-1', labels: { 'koordinator-colocation-pod': 'true' } },
    );
    const patch = JSON.parse(
      '{"metadata":{"labels":{"test-patch-label":"patch-a"},"annotations":{"test-patch-annotation":"patch-b"}}}',
    ) as JsonValue;
    assert.deepEqual(patchPod(original, patch), {
      ...original,
      metadata: {
        namespace: 'default',
        name: 'test-pod-1',
        labels: { 'koordinator-colocation-pod': 'true', 'test-patch-label': 'patch-a' },
        annotations: { 'test-patch-annotation': 'patch-b' },
      },
    });
  });

  it('overwrites scalars and merges maps recursively', () => {
    const original = pod({
      schedulerName: 'default-scheduler',
      securityContext: { runAsUser: 1000, fsGroup: 2000 },
      nodeSelector: { zone: 'a' },
    });
    const result = patchPod(original, {
      spec: {
        schedulerName: 'koord-scheduler',
        securityContext: { runAsUser: 0 },
        nodeSelector: { disk: 'ssd' },
      },
    });
    assert.deepEqual(result.spec, {
      schedulerName: 'koord-scheduler',
      securityContext: { runAsUser: 0, fsGroup: 2000 },
      nodeSelector: { zone: 'a', disk: 'ssd' },
    });
  });

  it('deletes keys set to null and ignores nulls for absent keys', () => {
    const original = pod({ nodeName: 'n1', priority: 5 }, { name: 'p', labels: { keep: '1', drop: '2' } });
    const result = patchPod(original, {
      metadata: { labels: { drop: null, absent: null } },
      spec: { nodeName: null, hostname: null },
    });
    assert.deepEqual(result.metadata, { name: 'p', labels: { keep: '1' } });
    assert.deepEqual(result.spec, { priority: 5 });
  });

  it('takes the patch value when the JSON type changes', () => {
    const result = patchPod(pod({ odd: 'text', other: { a: 1 } }), { spec: { odd: { a: 1 }, other: [1] } });
    assert.deepEqual(result.spec, { odd: { a: 1 }, other: [1] });
  });

  it('replaces a map with $patch: replace', () => {
    const original = pod({}, { name: 'p', labels: { a: '1', b: '2' } });
    const result = patchPod(original, { metadata: { labels: { $patch: 'replace', only: 'this' } } });
    assert.deepEqual(result.metadata, { name: 'p', labels: { only: 'this' } });
  });

  it('empties a map with $patch: delete, as apimachinery does', () => {
    const original = pod({ affinity: { nodeAffinity: { x: 1 } }, schedulerName: 's' });
    const result = patchPod(original, { spec: { affinity: { $patch: 'delete' } } });
    assert.deepEqual(result.spec, { affinity: {}, schedulerName: 's' });
  });

  it('honours $patch at the root', () => {
    const original = pod({ schedulerName: 's' });
    assert.deepEqual(patchPod(original, { $patch: 'delete' }), {});
    assert.deepEqual(patchPod(original, { $patch: 'replace', kind: 'Pod' }), { kind: 'Pod' });
  });

  it('keeps only the $retainKeys fields of the original', () => {
    const original = pod({
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
    });
    const result = patchPod(original, {
      spec: { volumes: [{ name: 'data', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }] },
    });
    assert.deepEqual(result.spec, {
      volumes: [
        { name: 'data', hostPath: { path: '/x' } },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
    });
  });

  it('resolves directives and nulls in values for fields the original lacks', () => {
    const original = pod({ containers: [{ name: 'app' }] }, { name: 'p' });
    const result = patchPod(original, {
      metadata: { labels: { a: '1', b: null }, annotations: { $patch: 'replace', x: 'y' } },
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', value: '1' },
              { name: 'Z', $patch: 'delete' },
            ],
          },
        ],
      },
    });
    assert.deepEqual(result.metadata, { name: 'p', labels: { a: '1' }, annotations: { x: 'y' } });
    assert.deepEqual(result.spec, { containers: [{ name: 'app', env: [{ name: 'A', value: '1' }] }] });
  });

  it('keeps a __proto__ key as plain data', () => {
    const patch = JSON.parse('{"metadata":{"labels":{"__proto__":"x"}}}') as JsonValue;
    const result = patchPod(pod({}, { name: 'p', labels: { a: '1' } }), patch);
    const labels = result.metadata as JsonObject;
    const merged = labels.labels as JsonObject;
    assert.equal(Object.getPrototypeOf(merged), Object.prototype);
    assert.ok(Object.hasOwn(merged, '__proto__'));
    assert.deepEqual(Object.keys(merged), ['a', '__proto__']);
  });

  it('returns a result that shares nothing with the patch', () => {
    const original = pod({ containers: [{ name: 'app', env: [{ name: 'A', value: '1' }] }] });
    const patch: JsonObject = { spec: { containers: [{ name: 'side', env: [{ name: 'B', value: '2' }] }] } };
    const before = structuredClone(patch);
    const result = strategicMergePatch(deepFreeze(original), patch, POD_PATCH_SCHEMA);
    const containers = (result.spec as JsonObject).containers as JsonObject[];
    const side = containers.find((container) => container.name === 'side');
    assert.ok(side);
    (side.env as JsonObject[]).push({ name: 'X' });
    side.image = 'changed';
    assert.deepEqual(patch, before);
  });

  it('copies only the maps and lists the patch touches, sharing every other subtree with the original', () => {
    const app = { name: 'app', env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } };
    const original = deepFreeze(
      pod(
        { containers: [app, { name: 'side', image: 's:1' }], volumes: [{ name: 'v', emptyDir: {} }] },
        { name: 'p', labels: { a: '1' }, annotations: { big: 'x' } },
      ),
    );
    const result = strategicMergePatch(
      original,
      { metadata: { labels: { b: '2' } }, spec: { containers: [{ name: 'side', image: 's:2' }] } },
      POD_PATCH_SCHEMA,
    );
    const metadata = result.metadata as JsonObject;
    const spec = result.spec as JsonObject;
    const before = original.spec as JsonObject;
    assert.deepEqual(metadata.labels, { a: '1', b: '2' });
    assert.notEqual(metadata, original.metadata);
    assert.equal(metadata.annotations, (original.metadata as JsonObject).annotations);
    assert.equal(spec.volumes, before.volumes);
    const containers = spec.containers as JsonObject[];
    assert.notEqual(containers, before.containers);
    assert.equal(containers[0], app);
    assert.deepEqual(containers[1], { name: 'side', image: 's:2' });
    assert.equal(Object.isFrozen(containers[1]), false);
  });
});

describe('strategicMergePatch: lists', () => {
  it('merges containers by name and their env by name', () => {
    const original = pod({
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'side', image: 's:1' },
      ],
    });
    const result = patchPod(original, {
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'B', value: 'two' },
              { name: 'C', value: '3' },
            ],
          },
        ],
      },
    });
    assert.deepEqual(result.spec, {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: 'two' },
            { name: 'C', value: '3' },
          ],
        },
        { name: 'side', image: 's:1' },
      ],
    });
  });

  it('merges init and ephemeral containers, ports, volume mounts and devices by their keys', () => {
    const container = (name: string): JsonObject => ({
      name,
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      volumeMounts: [{ mountPath: '/a', name: 'v1' }],
      volumeDevices: [{ devicePath: '/dev/x', name: 'd1' }],
    });
    const change: JsonObject = {
      ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }],
      volumeMounts: [{ mountPath: '/a', readOnly: true }],
      volumeDevices: [{ devicePath: '/dev/x', name: 'd2' }],
    };
    const original = pod({
      initContainers: [container('init')],
      containers: [container('app')],
      ephemeralContainers: [container('debug')],
    });
    const result = patchPod(original, {
      spec: {
        initContainers: [{ name: 'init', ...change }],
        containers: [{ name: 'app', ...change }],
        ephemeralContainers: [{ name: 'debug', ...change }],
      },
    });
    const expected = (name: string): JsonObject => ({
      name,
      ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 443 }],
      volumeMounts: [{ mountPath: '/a', name: 'v1', readOnly: true }],
      volumeDevices: [{ devicePath: '/dev/x', name: 'd2' }],
    });
    assert.deepEqual(result.spec, {
      initContainers: [expected('init')],
      containers: [expected('app')],
      ephemeralContainers: [expected('debug')],
    });
  });

  it('puts a new item ahead of the unmatched existing ones, as apimachinery orders it', () => {
    const original = pod({ containers: [{ name: 'app' }, { name: 'worker' }] });
    const added = patchPod(original, { spec: { containers: [{ name: 'sidecar', image: 's' }] } });
    assert.deepEqual(names((added.spec as JsonObject).containers), ['sidecar', 'app', 'worker']);
    const afterMatch = patchPod(original, { spec: { containers: [{ name: 'app' }, { name: 'sidecar' }] } });
    assert.deepEqual(names((afterMatch.spec as JsonObject).containers), ['app', 'sidecar', 'worker']);
  });

  it('merges the other keyed pod lists', () => {
    const original = pod(
      {
        imagePullSecrets: [{ name: 'a' }],
        hostAliases: [{ ip: '10.0.0.1', hostnames: ['x'] }],
        topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' }],
        schedulingGates: [{ name: 'g1' }],
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'c1' }],
      },
      { name: 'p', ownerReferences: [{ uid: 'u1', kind: 'ReplicaSet', name: 'rs' }] },
    );
    const result = patchPod(original, {
      metadata: { ownerReferences: [{ uid: 'u1', controller: true }] },
      spec: {
        imagePullSecrets: [{ name: 'b' }],
        hostAliases: [{ ip: '10.0.0.1', hostnames: ['y'] }],
        topologySpreadConstraints: [
          { topologyKey: 'zone', maxSkew: 2 },
          { topologyKey: 'host', maxSkew: 1 },
        ],
        schedulingGates: [{ name: 'g1', $patch: 'delete' }],
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'c2' }],
      },
    });
    assert.deepEqual(result.metadata, {
      name: 'p',
      ownerReferences: [{ uid: 'u1', kind: 'ReplicaSet', name: 'rs', controller: true }],
    });
    assert.deepEqual(result.spec, {
      imagePullSecrets: [{ name: 'b' }, { name: 'a' }],
      hostAliases: [{ ip: '10.0.0.1', hostnames: ['y'] }],
      topologySpreadConstraints: [
        { topologyKey: 'zone', maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule' },
        { topologyKey: 'host', maxSkew: 1 },
      ],
      schedulingGates: [],
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'c2' }],
    });
  });

  it('merges status conditions by type and pod IPs by ip', () => {
    const original: JsonObject = {
      ...pod({}),
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True' },
        ],
        podIPs: [{ ip: '10.0.0.1' }],
        containerStatuses: [{ name: 'app', ready: false }],
      },
    };
    const result = patchPod(original, {
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        podIPs: [{ ip: 'fd00::1' }],
        containerStatuses: [{ name: 'app', ready: true, restartCount: 0 }],
      },
    });
    assert.deepEqual(result.status, {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'PodScheduled', status: 'True' },
      ],
      podIPs: [{ ip: 'fd00::1' }, { ip: '10.0.0.1' }],
      containerStatuses: [{ name: 'app', ready: true, restartCount: 0 }],
    });
  });

  it('replaces lists without a strategy: tolerations, readinessGates, resizePolicy, command', () => {
    const original = pod({
      tolerations: [{ key: 'a', operator: 'Exists' }],
      readinessGates: [{ conditionType: 'x' }],
      containers: [
        {
          name: 'app',
          command: ['a', 'b'],
          resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
        },
      ],
    });
    const result = patchPod(original, {
      spec: {
        tolerations: [{ key: 'koordinator.sh/batch', operator: 'Exists', effect: 'NoSchedule' }],
        readinessGates: [{ conditionType: 'y' }],
        containers: [
          {
            name: 'app',
            command: ['c'],
            resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          },
        ],
      },
    });
    assert.deepEqual(result.spec, {
      tolerations: [{ key: 'koordinator.sh/batch', operator: 'Exists', effect: 'NoSchedule' }],
      readinessGates: [{ conditionType: 'y' }],
      containers: [
        {
          name: 'app',
          command: ['c'],
          resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
        },
      ],
    });
  });

  it('merges finalizers as an ordered set', () => {
    const original = pod({}, { name: 'p', finalizers: ['a', 'b'] });
    const overlapping = patchPod(original, { metadata: { finalizers: ['b', 'c', 'c'] } });
    assert.deepEqual((overlapping.metadata as JsonObject).finalizers, ['a', 'b', 'c']);
    const fresh = patchPod(original, { metadata: { finalizers: ['z'] } });
    assert.deepEqual((fresh.metadata as JsonObject).finalizers, ['z', 'a', 'b']);
  });

  it('deletes from a primitive list with $deleteFromPrimitiveList', () => {
    const original = pod({}, { name: 'p', finalizers: ['a', 'b', 'c'] });
    const result = patchPod(original, {
      metadata: { finalizers: ['d'], '$deleteFromPrimitiveList/finalizers': ['b', 'x'] },
    });
    assert.deepEqual((result.metadata as JsonObject).finalizers, ['d', 'a', 'c']);
    const absent = patchPod(pod({}), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } });
    assert.deepEqual(absent.metadata, { name: 'p', namespace: 'default' });
  });

  it('deletes a keyed item with $patch: delete', () => {
    const original = pod({
      containers: [{ name: 'app', env: [{ name: 'A' }, { name: 'B', value: '2' }] }],
      volumes: [{ name: 'v1' }, { name: 'v2' }],
    });
    const result = patchPod(original, {
      spec: {
        containers: [{ name: 'app', env: [{ name: 'A', $patch: 'delete' }] }],
        volumes: [{ name: 'v2', $patch: 'delete' }, { name: 'v3' }],
      },
    });
    assert.deepEqual(result.spec, {
      containers: [{ name: 'app', env: [{ name: 'B', value: '2' }] }],
      volumes: [{ name: 'v3' }, { name: 'v1' }],
    });
  });

  it('replaces a keyed list holding a $patch: replace item', () => {
    const original = pod({
      containers: [
        { name: 'a', image: 'a' },
        { name: 'b', image: 'b' },
      ],
    });
    const result = patchPod(original, {
      spec: { containers: [{ name: 'c', image: 'c' }, { $patch: 'replace' }] },
    });
    assert.deepEqual(result.spec, { containers: [{ name: 'c', image: 'c' }] });
    const emptied = patchPod(original, { spec: { containers: [{ $patch: 'replace' }] } });
    assert.deepEqual(emptied.spec, { containers: [] });
  });

  it('reorders a keyed list with $setElementOrder', () => {
    const original = pod({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const reordered = patchPod(original, {
      spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }] },
    });
    assert.deepEqual(names((reordered.spec as JsonObject).containers), ['c', 'a', 'b']);
    // Items the order leaves out keep their place relative to the items around them.
    const withContent = patchPod(original, {
      spec: {
        '$setElementOrder/containers': [{ name: 'b' }, { name: 'd' }, { name: 'a' }],
        containers: [{ name: 'd', image: 'd' }],
      },
    });
    assert.deepEqual((withContent.spec as JsonObject).containers, [
      { name: 'b' },
      { name: 'd', image: 'd' },
      { name: 'a' },
      { name: 'c' },
    ]);
  });

  it('reorders a primitive list with $setElementOrder', () => {
    const original = pod({}, { name: 'p', finalizers: ['x', 'y', 'z'] });
    const result = patchPod(original, { metadata: { '$setElementOrder/finalizers': ['z', 'x'] } });
    assert.deepEqual((result.metadata as JsonObject).finalizers, ['y', 'z', 'x']);
  });
});

describe('strategicMergePatch: schemas', () => {
  it('carries the core/v1 merge keys', () => {
    const expected: [string, string | undefined][] = [
      ['metadata.finalizers', undefined],
      ['metadata.ownerReferences', 'uid'],
      ['spec.volumes', 'name'],
      ['spec.containers', 'name'],
      ['spec.initContainers.env', 'name'],
      ['spec.ephemeralContainers.ports', 'containerPort'],
      ['spec.containers.volumeMounts', 'mountPath'],
      ['spec.containers.volumeDevices', 'devicePath'],
      ['spec.imagePullSecrets', 'name'],
      ['spec.hostAliases', 'ip'],
      ['spec.topologySpreadConstraints', 'topologyKey'],
      ['spec.schedulingGates', 'name'],
      ['spec.resourceClaims', 'name'],
      ['status.conditions', 'type'],
      ['status.podIPs', 'ip'],
      ['status.hostIPs', 'ip'],
    ];
    for (const [path, key] of expected) {
      const strategy = POD_PATCH_SCHEMA.fields[path];
      assert.equal(strategy?.strategy, 'merge', path);
      assert.equal(strategy.key, key, path);
    }
    for (const path of ['spec.tolerations', 'spec.readinessGates', 'spec.containers.resizePolicy'])
      assert.equal(POD_PATCH_SCHEMA.fields[path], undefined, path);
    assert.ok(Object.isFrozen(POD_PATCH_SCHEMA.fields));
  });

  it('patches a Koordinator Reservation through embedPodSchema', () => {
    const schema = embedPodSchema(POD_PATCH_SCHEMA, ['spec', 'template']);
    assert.equal(schema.fields['spec.template.status.conditions'], undefined);
    const reservation: JsonObject = {
      apiVersion: 'scheduling.koordinator.sh/v1alpha1',
      kind: 'Reservation',
      metadata: { name: 'r', finalizers: ['a'] },
      spec: {
        template: {
          metadata: { labels: { x: '1' }, finalizers: ['t'] },
          spec: {
            containers: [{ name: 'main', env: [{ name: 'A', value: '1' }] }],
            tolerations: [{ key: 'k' }],
          },
        },
        owners: [{ object: { name: 'p1' } }],
        ttl: '1h',
      },
    };
    const result = strategicMergePatch(
      deepFreeze(reservation),
      deepFreeze({
        metadata: { finalizers: ['b'] },
        spec: {
          template: {
            metadata: { labels: { y: '2' }, finalizers: ['u'] },
            spec: {
              containers: [{ name: 'main', env: [{ name: 'B', value: '2' }] }],
              tolerations: [{ key: 't' }],
            },
          },
          owners: [{ object: { name: 'p2' } }],
        },
      }),
      schema,
    );
    assert.deepEqual(result, {
      apiVersion: 'scheduling.koordinator.sh/v1alpha1',
      kind: 'Reservation',
      metadata: { name: 'r', finalizers: ['b', 'a'] },
      spec: {
        template: {
          metadata: { labels: { x: '1', y: '2' }, finalizers: ['u', 't'] },
          spec: {
            containers: [
              {
                name: 'main',
                env: [
                  { name: 'B', value: '2' },
                  { name: 'A', value: '1' },
                ],
              },
            ],
            tolerations: [{ key: 't' }],
          },
        },
        owners: [{ object: { name: 'p2' } }],
        ttl: '1h',
      },
    });
  });

  it('refuses a bad template path', () => {
    assert.throws(() => embedPodSchema(POD_PATCH_SCHEMA, []), /bad template path/);
    assert.throws(() => embedPodSchema(POD_PATCH_SCHEMA, ['spec.template']), /bad template path/);
  });

  it('matches * against any key, preferring an exact name', () => {
    const schema: PatchSchema = {
      fields: {
        'spec.*.items': { strategy: 'merge', key: 'id' },
        'spec.special.items': { strategy: 'replace' },
        'spec.selector': { strategy: 'replace' },
      },
    };
    const original: JsonObject = {
      spec: {
        group: { items: [{ id: 1, a: 1 }] },
        special: { items: [{ id: 1, a: 1 }] },
        selector: { a: '1' },
      },
    };
    const result = strategicMergePatch(
      original,
      {
        spec: {
          group: { items: [{ id: 1, b: 2 }] },
          special: { items: [{ id: 1, b: 2 }] },
          selector: { b: '2' },
        },
      },
      schema,
    );
    assert.deepEqual(result, {
      spec: {
        group: { items: [{ id: 1, a: 1, b: 2 }] },
        special: { items: [{ id: 1, b: 2 }] },
        selector: { b: '2' },
      },
    });
  });

  it('refuses a malformed schema path', () => {
    assert.throws(
      () => strategicMergePatch({}, {}, { fields: { 'spec..x': { strategy: 'replace' } } }),
      /bad field path/,
    );
  });
});

describe('strategicMergePatch: invalid patches', () => {
  const withContainers = pod({ containers: [{ name: 'app', env: [{ name: 'A' }] }] }, { name: 'p' });

  it('refuses a patch that is not an object', () => {
    rejects(withContainers, [], '', /must be a JSON object, not a list/);
    rejects(withContainers, null, '', /must be a JSON object, not null/);
    rejects(withContainers, 'x', '', /must be a JSON object, not a string/);
  });

  it('refuses an unknown $patch on a map', () => {
    rejects(
      withContainers,
      { metadata: { labels: { $patch: 'bogus' } } },
      'metadata.labels.$patch',
      /"bogus"/,
    );
  });

  it('refuses a keyed list item without its merge key', () => {
    rejects(
      withContainers,
      { spec: { containers: [{ image: 'x' }] } },
      'spec.containers[0]',
      /merge key "name"/,
    );
    rejects(
      withContainers,
      { spec: { containers: [{ name: 'app', env: [{ name: 'B' }, { value: '1' }] }] } },
      'spec.containers[0].env[1]',
      /merge key "name"/,
    );
    rejects(withContainers, { spec: { containers: ['app'] } }, 'spec.containers[0]', /expected an object/);
  });

  it('refuses bad list directives', () => {
    rejects(
      withContainers,
      { spec: { containers: [{ $patch: 'delete' }] } },
      'spec.containers[0]',
      /"delete" needs the merge key "name"/,
    );
    rejects(
      withContainers,
      { spec: { containers: [{ name: 'app', $patch: 'merge' }] } },
      'spec.containers[0].$patch',
      /unknown directive "merge"/,
    );
  });

  it('refuses objects in a primitive list', () => {
    rejects(withContainers, { metadata: { finalizers: [{ a: 1 }] } }, 'metadata.finalizers[0]', /primitives/);
  });

  it('refuses a bad $retainKeys', () => {
    const withVolume = pod({ volumes: [{ name: 'v', emptyDir: {} }] });
    rejects(
      withVolume,
      { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['name'] }] } },
      'spec.volumes[0].$retainKeys',
      /sets "hostPath"/,
    );
    rejects(withVolume, { spec: { $retainKeys: 'volumes' } }, 'spec.$retainKeys', /list of field names/);
  });

  it('refuses $deleteFromPrimitiveList on other lists', () => {
    rejects(
      pod({ tolerations: [{ key: 'a' }] }),
      { spec: { '$deleteFromPrimitiveList/tolerations': [{ key: 'a' }] } },
      'spec["$deleteFromPrimitiveList/tolerations"]',
      /not a list merged as a set of primitives/,
    );
    rejects(
      pod({}, { name: 'p', finalizers: ['a'] }),
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      'metadata["$deleteFromPrimitiveList/finalizers"]',
      /list of values/,
    );
  });

  it('refuses a bad $setElementOrder', () => {
    const original = pod({ containers: [{ name: 'a' }, { name: 'b' }] });
    rejects(
      original,
      { spec: { '$setElementOrder/containers': { name: 'a' } } },
      'spec["$setElementOrder/containers"]',
      /expected a list/,
    );
    rejects(
      original,
      { spec: { '$setElementOrder/containers': [{ image: 'a' }] } },
      'spec["$setElementOrder/containers"][0]',
      /merge key "name"/,
    );
    rejects(
      original,
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
          containers: [{ name: 'b' }, { name: 'a' }],
        },
      },
      'spec["$setElementOrder/containers"]',
      /another order/,
    );
  });

  it('refuses to merge into an existing item without its merge key', () => {
    rejects(
      pod({ containers: [{ image: 'x' }] }),
      { spec: { containers: [{ name: 'app' }] } },
      'spec.containers',
      /existing item 0 lacks the merge key "name"/,
    );
  });
});
