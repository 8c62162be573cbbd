/**
 * Every documented difference between our webhooks and Koordinator's (v1.8.0, and v1.7.0 where a
 * class says so), as a classifier
 * (classify.ts): a difference the suite observes is expected only when these explain it, and each
 * names the rule page (docs/rules/) that says what we do instead, why, and Koordinator's line.
 * A new difference, or one of these grown past what it documents, fails the run.
 */
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import { readQuantity } from '../../webhook/util/quantity.js';
import type { DocumentedDifference, Observed, Pair } from './classify.js';
import type { Verdict } from './compare.js';
import {
  EXTENDED_SPEC_ANNOTATION,
  KOORDINATOR_NAMESPACE,
  Q,
  RATIO_ANNOTATION,
  SLO_CONFIG_NAME,
  text,
} from './vocabulary.js';
import type { World } from './world.js';

const POD_PATHS = ['/validate-pod'];
const QUOTA_PATHS = [
  '/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
  '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
];

const request = (observed: Observed): JsonObject => observed.review.request as JsonObject;
const objectOf = (observed: Observed, field: 'object' | 'oldObject' = 'object'): KubeObject | null =>
  (request(observed)[field] ?? null) as KubeObject | null;
const operation = (observed: Observed): string => text(request(observed).operation);

const withOurs = (pair: Pair, ours: Partial<Verdict>): Pair => ({ ...pair, ours: { ...pair.ours, ...ours } });
const withTheirs = (pair: Pair, theirs: Partial<Verdict>): Pair => ({
  ...pair,
  theirs: { ...pair.theirs, ...theirs },
});

/** The review with its object (and old object) changed by `edit`. */
function reviewWith(observed: Observed, edit: (object: KubeObject) => void): JsonObject {
  const review = structuredClone(observed.review);
  const req = review.request as JsonObject;
  for (const field of ['object', 'oldObject'] as const) {
    const object = req[field] as KubeObject | null | undefined;
    if (object) edit(object);
  }
  return review;
}

/** The world with `edit` applied to a copy of its objects. */
function worldWith(world: World, edit: (objects: KubeObject[]) => KubeObject[]): World {
  return { objects: edit(structuredClone(world.objects)) };
}

const dataOf = (object: KubeObject): Record<string, string> => {
  object.data ??= {};
  return object.data as Record<string, string>;
};

const isSloConfig = (o: KubeObject): boolean =>
  o.kind === 'ConfigMap' &&
  o.metadata.name === SLO_CONFIG_NAME &&
  o.metadata.namespace === KOORDINATOR_NAMESPACE;

/** The world with its slo-controller-config's data changed by `edit` (undefined when it has none). */
function worldWithSloData(world: World, edit: (data: Record<string, string>) => boolean): World | undefined {
  let changed = false;
  const next = worldWith(world, (objects) => {
    for (const o of objects) if (isSloConfig(o)) changed = edit(dataOf(o)) || changed;
    return objects;
  });
  return changed ? next : undefined;
}

/**
 * A system-config the resource-qos checker of Koordinator cannot start from: missing, not a JSON
 * object, or with a totalNetworkBandwidth Go cannot read as a quantity.
 */
const unusableSystemConfig = (data: Readonly<Record<string, string>>): boolean => {
  const value = data['system-config'];
  if (value === undefined || value === '') return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return true;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return true;
  const config = parsed as { clusterStrategy?: JsonObject; nodeStrategies?: JsonObject[] };
  return [
    config.clusterStrategy,
    ...(Array.isArray(config.nodeStrategies) ? config.nodeStrategies : []),
  ].some((strategy) => {
    const total = strategy?.totalNetworkBandwidth;
    return total !== undefined && !(typeof total === 'string' && readQuantity(total).ok);
  });
};

const annotationsOf = (object: KubeObject): Record<string, string> =>
  (object.metadata.annotations ?? {}) as Record<string, string>;

// A field path as our messages put it in front: `metadata.labels[quota...]`, `spec.min[cpu]`,
// `spec.containers[*].resources.requests`, `metadata.name`.
const FIELD_PATH = /^[A-Za-z]+(?:\.[A-Za-z]+|\[[^\]]+\])*: /;

/** Our message without the field path in front, when that is what separates it from theirs. */
function withoutFieldPath(ours: string, theirs: string): boolean {
  const match = FIELD_PATH.exec(ours);
  return match !== null && ours.slice(match[0].length) === theirs;
}

const bothRefuse = (pair: Pair): boolean => !pair.ours.allowed && !pair.theirs.allowed;

const PROFILE_NOT_APPLIED = /^ClusterColocationProfile "([^"]+)": .*; the profile was not applied$/;

/** The container lists of a pod object (or a Reservation's template). */
function containersOf(object: JsonObject | null | undefined): JsonObject[] {
  const spec = (object?.spec ?? {}) as JsonObject;
  return ((spec.containers ?? []) as JsonObject[]).filter((c) => typeof c === 'object' && c !== null);
}

const KOORD_GPU = [
  'koordinator.sh/gpu',
  'koordinator.sh/gpu-core',
  'koordinator.sh/gpu-memory',
  'koordinator.sh/gpu-memory-ratio',
  'koordinator.sh/gpu.shared',
];

const units = (value: unknown): bigint | undefined => {
  if (typeof value !== 'string') return undefined;
  const read = readQuantity(value);
  return read.ok ? read.value / 1_000_000_000n : undefined;
};

/** `k=v,k2=v2` of a prettyPrint list, as a map. */
function parseList(list: string): Map<string, string> {
  return new Map(
    list
      .split(',')
      .filter((item) => item !== '')
      .map((item) => {
        const at = item.indexOf('=');
        return [item.slice(0, at), item.slice(at + 1)] as [string, string];
      }),
  );
}

const EXCEEDED = /^exceeded quota: (\S+), requested: (.*), used: (.*), limited: (.*)$/;

const sameAmounts = (a: Map<string, string>, b: Map<string, string>): boolean =>
  a.size === b.size &&
  [...a].every(([key, value]) => {
    const other = b.get(key);
    if (other === undefined) return false;
    const x = readQuantity(value);
    const y = readQuantity(other);
    return x.ok && y.ok && x.value === y.value;
  });

/** Koordinator's ExistNodeConfict error: the key, the strategies and the node. */
function nodeConflict(message: string): { key: string; strategies: string[]; node: string } | undefined {
  const match = /^___(.*)___$/.exec(message);
  if (!match?.[1]) return undefined;
  try {
    const parsed = JSON.parse(match[1]) as {
      reason?: string;
      message?: { config?: string; strategies?: string[]; exampleNodes?: string[] };
    };
    if (parsed.reason !== 'ExistNodeConfict' || !parsed.message) return undefined;
    return {
      key: parsed.message.config ?? '',
      strategies: parsed.message.strategies ?? [],
      node: parsed.message.exampleNodes?.[0] ?? '',
    };
  } catch {
    return undefined;
  }
}

const NODE_CONFLICT_SENTENCE =
  /node "([^"]+)" matches \d+ node strategies of slo-controller-config data\[([^\]]+)\]: \[(.*?)\]; a node may match at most one/g;

/** The slo-controller-config fields Koordinator v1.8.0 added. */
const SLO_FIELDS_OF_V180 = new Set([
  'midReclaimMode',
  'midStaticCPUReservedPercent',
  'midStaticMemoryReservedPercent',
  'cpuAllocatableEvictThresholdPercent',
  'cpuAllocatableEvictLowerPercent',
  'memoryAllocatableEvictThresholdPercent',
  'memoryAllocatableEvictLowerPercent',
  'allocatableEvictPriorityThreshold',
]);

/** Deletes `names` wherever they are keys in `value`; true when it deleted any. */
function stripFields(value: unknown, names: ReadonlySet<string>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let changed = false;
  if (Array.isArray(value)) {
    for (const item of value) changed = stripFields(item, names) || changed;
    return changed;
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (names.has(key)) {
      Reflect.deleteProperty(object, key);
      changed = true;
    } else changed = stripFields(object[key], names) || changed;
  }
  return changed;
}

export const DOCUMENTED: readonly DocumentedDifference[] = [
  {
    id: 'field-path-in-front',
    page: 'validate-pod.md, validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md, mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    reconcile: (pair, observed) =>
      [...POD_PATHS, ...QUOTA_PATHS].includes(observed.path) &&
      bothRefuse(pair) &&
      withoutFieldPath(pair.ours.message, pair.theirs.message)
        ? withOurs(pair, { message: pair.theirs.message })
        : undefined,
  },
  {
    id: 'required-labels-name-their-rule',
    page: 'validate-pod.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/validate-pod' || !bothRefuse(pair)) return undefined;
      const match = /^metadata\.labels: (.*) \(rule "[^"]*" of ConfigMap [^)]*\)$/.exec(pair.ours.message);
      return match?.[1] === pair.theirs.message
        ? withOurs(pair, { message: pair.theirs.message })
        : undefined;
    },
  },
  {
    id: 'quota-used-spelling',
    page: 'validate-pod.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/validate-pod' || !bothRefuse(pair)) return undefined;
      const ours = EXCEEDED.exec(pair.ours.message.replace(FIELD_PATH, ''));
      const theirs = EXCEEDED.exec(pair.theirs.message);
      if (!ours || !theirs || ours[1] !== theirs[1] || ours[2] !== theirs[2] || ours[4] !== theirs[4])
        return undefined;
      if (ours[3] === theirs[3] || !sameAmounts(parseList(ours[3] ?? ''), parseList(theirs[3] ?? '')))
        return undefined;
      return withOurs(pair, {
        message: pair.ours.message.replace(`used: ${ours[3] ?? ''},`, `used: ${theirs[3] ?? ''},`),
      });
    },
  },
  {
    // v1.8.0 enforces the step as we do; v1.7.0 discards its answer.
    id: 'colocation-step-enforced',
    releases: ['v1.7.0'],
    page: 'validate-pod.md#the-colocation-step',
    counterfactual: (observed) =>
      observed.path === '/validate-pod' &&
      !observed.ours.allowed &&
      /koordinator\.sh\/(qosClass|priority)|spec\.priority: Invalid|LSR Pod/.test(observed.ours.message)
        ? { ourEnforcement: 'validate-pod/colocation=dryrun' }
        : undefined,
  },
  {
    // v1.7.0 sums containers, init containers and overhead only (k8s.io/kubernetes v0.28's
    // PodRequests); v1.8.0 lets spec.resources replace the sum, as we do.
    id: 'pod-level-resources-counted',
    releases: ['v1.7.0'],
    page: 'validate-pod.md',
    counterfactual: (observed) => {
      const podLevel = (o: KubeObject | null): boolean =>
        o?.kind === 'Pod' && (o.spec as JsonObject | undefined)?.resources !== undefined;
      const strip = (o: KubeObject): KubeObject => {
        if (podLevel(o)) Reflect.deleteProperty(o.spec as JsonObject, 'resources');
        return o;
      };
      const inReview = podLevel(objectOf(observed)) || podLevel(objectOf(observed, 'oldObject'));
      if (!inReview && !observed.world.objects.some(podLevel)) return undefined;
      return {
        review: reviewWith(observed, strip),
        world: worldWith(observed.world, (objects) => objects.map(strip)),
      };
    },
  },
  {
    id: 'profile-not-applied',
    page: 'mutate-pod.md, mutate-reservation.md',
    counterfactual: (observed) => {
      const skipped = new Set(
        observed.ours.warnings.flatMap((warning) => {
          const name = PROFILE_NOT_APPLIED.exec(warning)?.[1];
          return name ? [name] : [];
        }),
      );
      if (skipped.size === 0) return undefined;
      return {
        world: worldWith(observed.world, (objects) =>
          objects.filter(
            (o) => !(o.kind === 'ClusterColocationProfile' && skipped.has(text(o.metadata.name))),
          ),
        ),
      };
    },
  },
  {
    id: 'gpu-split-creates-missing-map',
    page: 'mutate-pod.md',
    counterfactual: (observed) => {
      if (
        observed.path !== '/mutate-pod' ||
        !observed.theirs.panic?.includes('assignment to entry in nil map')
      )
        return undefined;
      return {
        review: reviewWith(observed, (pod) => {
          for (const container of containersOf(pod)) {
            const resources = (container.resources ?? {}) as JsonObject;
            const requests = (resources.requests ?? {}) as Record<string, string>;
            if (!KOORD_GPU.some((name) => name in requests)) continue;
            // A resource no rule reads, so the maps exist and nothing else changes.
            for (const kind of ['requests', 'limits'] as const) {
              resources[kind] = {
                ...((resources[kind] ?? {}) as JsonObject),
                'example.com/placeholder': '1',
              };
            }
            container.resources = resources;
          }
        }),
      };
    },
  },
  {
    id: 'gpu-shared-from-core',
    page: 'mutate-pod.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/mutate-pod' || !pair.canonicalTheirs || !pair.canonicalOurs) return undefined;
      const theirs = structuredClone(pair.canonicalTheirs);
      let changed = false;
      const original = containersOf(objectOf(observed));
      containersOf(theirs).forEach((container, i) => {
        const asked = ((original[i]?.resources as JsonObject | undefined)?.requests ?? {}) as Record<
          string,
          string
        >;
        const core = units(asked['koordinator.sh/gpu-core']);
        if (
          core === undefined ||
          'koordinator.sh/gpu-memory-ratio' in asked ||
          'koordinator.sh/gpu.shared' in asked
        )
          return;
        if (!(core > 100n && core % 100n === 0n)) return;
        const resources = (container.resources ?? {}) as Record<string, Record<string, string>>;
        for (const kind of ['requests', 'limits']) {
          if (resources[kind]?.['koordinator.sh/gpu.shared'] === '0') {
            resources[kind]['koordinator.sh/gpu.shared'] = String(core / 100n);
            changed = true;
          }
        }
      });
      return changed ? { ...pair, canonicalTheirs: theirs } : undefined;
    },
  },
  {
    id: 'extended-resource-spec-unreadable',
    page: 'mutate-pod.md',
    counterfactual: (observed) =>
      observed.path === '/mutate-pod' &&
      observed.theirs.message.startsWith('failed to get current extended resource spec')
        ? {
            review: reviewWith(observed, (pod) => {
              Reflect.deleteProperty(annotationsOf(pod), EXTENDED_SPEC_ANNOTATION);
            }),
          }
        : undefined,
  },
  {
    id: 'node-status-passes-unamplified',
    page: 'mutate-node-status.md',
    reconcile: (pair, observed) =>
      observed.path === '/mutate-node-status' &&
      !pair.theirs.allowed &&
      pair.theirs.code === 500 &&
      pair.theirs.message.startsWith('failed to unmarshal node ') &&
      pair.ours.allowed &&
      pair.ours.patch.length === 0 &&
      pair.ours.warnings.length > 0 &&
      pair.ours.warnings.every((warning) => warning.endsWith('node status not amplified'))
        ? {
            ...pair,
            theirs: { ...pair.ours },
            canonicalTheirs: pair.canonicalOurs,
          }
        : undefined,
  },
  {
    id: 'node-ratio-checked',
    page: 'validate-node.md',
    counterfactual: (observed) =>
      observed.path === '/validate-node' && observed.ours.message.includes(RATIO_ANNOTATION)
        ? {
            review: reviewWith(observed, (node) => {
              Reflect.deleteProperty(annotationsOf(node), RATIO_ANNOTATION);
            }),
          }
        : undefined,
  },
  {
    id: 'node-conflict-sentence',
    page: 'validate-node.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/validate-node' || !bothRefuse(pair)) return undefined;
      const theirs = nodeConflict(pair.theirs.message);
      if (!theirs) return undefined;
      const unnamed = (name: string): string =>
        /^(nodeStrategies|nodeConfigs)\[\d+\]$/.test(name) ? '' : name;
      for (const match of pair.ours.message.matchAll(NODE_CONFLICT_SENTENCE)) {
        const strategies = (match[3] ?? '').split(' ').map(unnamed);
        if (
          match[1] === theirs.node &&
          match[2] === theirs.key &&
          strategies.join('\0') === theirs.strategies.join('\0')
        )
          return withOurs(pair, { message: pair.theirs.message });
      }
      return undefined;
    },
  },
  {
    id: 'node-conflict-warned-on-create',
    page: 'validate-node.md',
    reconcile: (pair, observed) =>
      observed.path === '/validate-node' &&
      operation(observed) === 'CREATE' &&
      pair.ours.allowed &&
      pair.ours.warnings.length > 0 &&
      pair.ours.warnings.every((warning) => warning.includes('a node may match at most one'))
        ? withOurs(pair, { warnings: [] })
        : undefined,
  },
  {
    id: 'slo-keys-koordinator-leaves-unchecked',
    page: 'validate-node.md, validate-configmap.md',
    counterfactual: (observed) => {
      const unchecked = [
        'host-application-config',
        'cpu-normalization-config',
        'resource-amplification-config',
      ];
      const edit = (data: Record<string, string>): void => {
        for (const key of unchecked) Reflect.deleteProperty(data, key);
      };
      const present = (object: KubeObject | null | undefined): boolean =>
        unchecked.some((key) => key in ((object?.data ?? {}) as JsonObject));
      if (observed.path === '/validate-node') {
        const slo = observed.world.objects.find(
          (o) =>
            o.kind === 'ConfigMap' &&
            o.metadata.name === SLO_CONFIG_NAME &&
            o.metadata.namespace === KOORDINATOR_NAMESPACE,
        );
        if (!present(slo)) return undefined;
        return {
          world: worldWith(observed.world, (objects) => {
            for (const o of objects)
              if (o.kind === 'ConfigMap' && o.metadata.name === SLO_CONFIG_NAME)
                edit((o.data ?? {}) as Record<string, string>);
            return objects;
          }),
        };
      }
      if (observed.path !== '/validate-configmap') return undefined;
      if (!present(objectOf(observed)) && !present(objectOf(observed, 'oldObject'))) return undefined;
      return {
        review: reviewWith(observed, (cm) => {
          edit((cm.data ?? {}) as Record<string, string>);
        }),
      };
    },
  },
  {
    // Fields v1.7.0's types do not have (json.Unmarshal drops them): we check them as v1.8.0 does.
    id: 'slo-fields-of-v1.8.0',
    releases: ['v1.7.0'],
    page: 'validate-configmap.md',
    counterfactual: (observed) => {
      const strip = (data: Record<string, string>): boolean => {
        let changed = false;
        for (const [key, value] of Object.entries(data)) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(value);
          } catch {
            continue;
          }
          if (stripFields(parsed, SLO_FIELDS_OF_V180)) {
            data[key] = JSON.stringify(parsed);
            changed = true;
          }
        }
        return changed;
      };
      if (observed.path === '/validate-node') {
        const world = worldWithSloData(observed.world, strip);
        return world ? { world } : undefined;
      }
      if (observed.path !== '/validate-configmap') return undefined;
      let found = false;
      const review = reviewWith(observed, (cm) => {
        found = strip(dataOf(cm)) || found;
      });
      return found ? { review } : undefined;
    },
  },
  {
    id: 'slo-refusal-lists-every-problem',
    page: 'validate-configmap.md',
    reconcile: (pair, observed) =>
      observed.path === '/validate-configmap' &&
      bothRefuse(pair) &&
      pair.ours.message.startsWith(
        `ConfigMap ${KOORDINATOR_NAMESPACE}/${SLO_CONFIG_NAME} is not a valid SLO configuration:`,
      ) &&
      (/^___\{"reason":/.test(pair.theirs.message) || /^[a-z]/i.test(pair.theirs.message))
        ? withOurs(pair, { message: pair.theirs.message })
        : undefined,
  },
  {
    id: 'json-error-wording',
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md, mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    reconcile: (pair, observed) => {
      if (!QUOTA_PATHS.includes(observed.path) || !bothRefuse(pair)) return undefined;
      const ours = pair.ours.message.replace(FIELD_PATH, '');
      const ourWords = /(not valid JSON|must be a JSON (object|array)[^:]*)$/;
      const goError = /(invalid character .*|unexpected end of JSON input|json: cannot unmarshal .*)$/;
      const ourPrefix = ours.replace(ourWords, '');
      const theirPrefix = pair.theirs.message.replace(goError, '');
      if (!ourWords.test(ours) || !goError.test(pair.theirs.message)) return undefined;
      // Koordinator returns the shared weight's Go error alone; ours names the annotation.
      return ourPrefix === theirPrefix || theirPrefix === ''
        ? withOurs(pair, { message: pair.theirs.message })
        : undefined;
    },
  },
  {
    id: 'quota-checks-koordinator-lacks',
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    reconcile: (pair, observed) =>
      observed.path === '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota' &&
      !pair.ours.allowed &&
      pair.theirs.allowed &&
      /(exceeds max \S+ of its parent \S+|cannot hang under .*: that would make it its own ancestor)$/.test(
        pair.ours.message,
      )
        ? withOurs(pair, { allowed: true, code: 200, message: '' })
        : undefined,
  },
  {
    id: 'go-map-order',
    // Go starts a small map's iteration at a random slot of its bucket: a key is first only one
    // time in eight for some maps, so Koordinator is asked up to 64 times.
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    counterfactual: (observed) =>
      QUOTA_PATHS.includes(observed.path) && observed.differences.every((d) => d === 'message')
        ? { theirRepeats: 64 }
        : undefined,
  },
  {
    // v1.8.0 has the label too.
    id: 'skip-enhanced-validation-label',
    releases: ['v1.7.0'],
    page: 'validate-pod.md',
    counterfactual: (observed) => {
      const label = 'pod.koordinator.sh/skip-enhanced-validation';
      const labels = (objectOf(observed)?.metadata.labels ?? {}) as Record<string, string>;
      return observed.path === '/validate-pod' && label in labels
        ? {
            review: reviewWith(observed, (pod) => {
              Reflect.deleteProperty((pod.metadata.labels ?? {}) as Record<string, string>, label);
            }),
          }
        : undefined;
    },
  },
  {
    id: 'resource-qos-without-system-config',
    page: 'validate-configmap.md, validate-node.md',
    counterfactual: (observed) => {
      if (observed.path === '/validate-configmap') {
        const data = (objectOf(observed)?.data ?? {}) as Record<string, string>;
        if (!('resource-qos-config' in data) || !unusableSystemConfig(data)) return undefined;
        return {
          review: reviewWith(observed, (cm) => {
            dataOf(cm)['system-config'] = '{}';
          }),
        };
      }
      if (observed.path !== '/validate-node') return undefined;
      const world = worldWithSloData(observed.world, (data) => {
        if (!('resource-qos-config' in data) || !unusableSystemConfig(data)) return false;
        data['system-config'] = '{}';
        return true;
      });
      return world ? { world } : undefined;
    },
  },
  {
    id: 'slo-unknown-field-warning',
    page: 'validate-configmap.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/validate-configmap') return undefined;
      const kept = pair.ours.warnings.filter(
        (warning) => !warning.endsWith('unknown field, ignored by the slo-controller'),
      );
      return kept.length < pair.ours.warnings.length ? withOurs(pair, { warnings: kept }) : undefined;
    },
  },
  {
    id: 'koordinator-crashes-on-null-colocation-config',
    page: 'validate-configmap.md, validate-node.md',
    counterfactual: (observed) => {
      if (!observed.theirs.panic) return undefined;
      const nulls = (data: Record<string, string>): boolean => {
        const keys = Object.keys(data).filter((key) => data[key]?.trim() === 'null');
        for (const key of keys) data[key] = '{}';
        return keys.length > 0;
      };
      if (observed.path === '/validate-configmap') {
        let found = false;
        const review = reviewWith(observed, (cm) => {
          found = nulls(dataOf(cm)) || found;
        });
        return found ? { review } : undefined;
      }
      const world = observed.path === '/validate-node' ? worldWithSloData(observed.world, nulls) : undefined;
      return world ? { world } : undefined;
    },
  },
  {
    id: 'finished-pods-hold-no-quota',
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    counterfactual: (observed) => {
      if (observed.path !== '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota') return undefined;
      const finished = (o: KubeObject): boolean =>
        o.kind === 'Pod' &&
        ['Succeeded', 'Failed'].includes(text((o.status as JsonObject | undefined)?.phase));
      if (!observed.world.objects.some(finished)) return undefined;
      return { world: worldWith(observed.world, (objects) => objects.filter((o) => !finished(o))) };
    },
  },
  {
    id: 'network-qos-arithmetic',
    page: 'validate-configmap.md',
    reconcile: (pair, observed) =>
      observed.path === '/validate-configmap' &&
      pair.ours.allowed &&
      !pair.theirs.allowed &&
      /total net bandwidth (percentage already over 100|over total network bandwidth in clusterStrategy|quantity already over total network bandwidth in cfg\.NodeStrategies\[\d+\])$/.test(
        pair.theirs.message,
      )
        ? withTheirs(pair, { allowed: true, code: 200, message: '' })
        : undefined,
  },
  {
    id: 'is-parent-bound-pods',
    page: 'validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota.md',
    counterfactual: (observed) => {
      if (
        observed.path !== '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota' ||
        !observed.theirs.message.startsWith('quota has bound pods, isParent is forbidden to modify as true')
      )
        return undefined;
      const old = objectOf(observed, 'oldObject');
      const name = text(old?.metadata.name);
      let bound: string[] = [];
      try {
        bound = JSON.parse(annotationsOf(old ?? { metadata: {} })[Q('namespaces')] ?? '[]') as string[];
      } catch {
        bound = [];
      }
      // What Koordinator counts and the store does not: finished pods, and pods of the quota's
      // namespaces labelled for another quota.
      const countedByThemOnly = (o: KubeObject): boolean => {
        if (o.kind !== 'Pod') return false;
        const label = ((o.metadata.labels ?? {}) as Record<string, string>)[Q('name')] ?? '';
        const phase = text((o.status as JsonObject | undefined)?.phase);
        const namespace = text(o.metadata.namespace);
        const inNamespaces = namespace === name || bound.includes(namespace);
        if (phase === 'Succeeded' || phase === 'Failed') return label === name || inNamespaces;
        return inNamespaces && label !== '' && label !== name;
      };
      if (!observed.world.objects.some(countedByThemOnly)) return undefined;
      return { world: worldWith(observed.world, (objects) => objects.filter((o) => !countedByThemOnly(o))) };
    },
  },
  {
    id: 'reservation-ttl-default',
    page: 'mutate-reservation.md',
    reconcile: (pair, observed) => {
      if (observed.path !== '/mutate-reservation' || !pair.canonicalOurs) return undefined;
      const spec = (objectOf(observed)?.spec ?? {}) as JsonObject;
      const ours = structuredClone(pair.canonicalOurs);
      const ourSpec = (ours.spec ?? {}) as JsonObject;
      const theirSpec = (pair.canonicalTheirs?.spec ?? {}) as JsonObject;
      // Through Go's type our 24h reads 24h0m0s.
      if (spec.ttl !== undefined || spec.expires !== undefined || theirSpec.ttl !== undefined)
        return undefined;
      if (ourSpec.ttl !== '24h0m0s') return undefined;
      Reflect.deleteProperty(ourSpec, 'ttl');
      return { ...pair, canonicalOurs: ours };
    },
  },
];
