/**
 * The GPU tier mapping: which GPU class (a node label value) each tenant tier gets. Admins
 * edit it as YAML under one key of the `gpu-tier-mapping` ConfigMap:
 *
 *   mapping.yaml: |
 *     namespaceLabelKey: tenant.kubenexus.io/tier   # the namespace label naming the tier
 *     nodeLabelKey: gpu.nvidia.com/class            # the node label naming the GPU class
 *     gpuResources: [nvidia.com/gpu, amd.com/gpu, intel.com/gpu]
 *     tiers:
 *       gold: h100                                  # one class, or a list
 *       silver: a100
 *       bronze: l4
 *     workloadTypeLabel: workload.kubenexus.io/type  # a pod label naming its workload type
 *     workloadOverrides:
 *       gold:
 *         inference: [a100, h100]
 *
 * Every key but `tiers` is optional. Tier names match case-insensitively, as KubeNexus does.
 */
import { parseDocument } from 'yaml';
import { DEFAULT_GPU_RESOURCE_NAMES, DEFAULT_TIER_LABEL_KEY } from '../../names.js';
import { labelKeyProblem, labelValueProblem } from '../../util/k8s-names.js';

export const MAPPING_DATA_KEY = 'mapping.yaml';
export const DEFAULT_NODE_LABEL_KEY = 'gpu.nvidia.com/class';
export const DEFAULT_WORKLOAD_TYPE_LABEL = 'workload.kubenexus.io/type';

export interface TierMapping {
  namespaceLabelKey: string;
  nodeLabelKey: string;
  gpuResources: readonly string[];
  /** Lower-cased tier → its classes, in the order given. */
  tiers: ReadonlyMap<string, readonly string[]>;
  workloadTypeLabel: string;
  /** Lower-cased tier → workload type → classes. */
  workloadOverrides: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;
}

/** KubeNexus's own table: gold → h100, silver → a100, bronze → l4. */
export const DEFAULT_TIER_MAPPING: TierMapping = {
  namespaceLabelKey: DEFAULT_TIER_LABEL_KEY,
  nodeLabelKey: DEFAULT_NODE_LABEL_KEY,
  gpuResources: DEFAULT_GPU_RESOURCE_NAMES,
  tiers: new Map([
    ['gold', ['h100']],
    ['silver', ['a100']],
    ['bronze', ['l4']],
  ]),
  workloadTypeLabel: DEFAULT_WORKLOAD_TYPE_LABEL,
  workloadOverrides: new Map(),
};

export type MappingResult = { ok: true; mapping: TierMapping } | { ok: false; errors: string[] };

const TOP_LEVEL_KEYS = new Set([
  'namespaceLabelKey',
  'nodeLabelKey',
  'gpuResources',
  'tiers',
  'workloadTypeLabel',
  'workloadOverrides',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses and checks a ConfigMap's data. Every problem is reported with the path of the
 * offending field (`data[mapping.yaml].tiers.gold[0]`), so an admin knows what to fix.
 */
export function parseTierMapping(data: Readonly<Record<string, string>>): MappingResult {
  const errors: string[] = [];
  const root = `data[${MAPPING_DATA_KEY}]`;
  for (const key of Object.keys(data)) {
    if (key !== MAPPING_DATA_KEY)
      errors.push(`data[${key}]: unknown key; the mapping lives under ${MAPPING_DATA_KEY}`);
  }
  const text = data[MAPPING_DATA_KEY];
  if (text === undefined) {
    errors.push(`${root}: Required value: the mapping is missing`);
    return { ok: false, errors };
  }
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0) {
    for (const error of document.errors)
      errors.push(`${root}: not valid YAML: ${error.message.split('\n')[0] ?? ''}`);
    return { ok: false, errors };
  }
  const content: unknown = document.toJS();
  if (!isRecord(content)) {
    errors.push(`${root}: must be a YAML mapping with at least the key "tiers"`);
    return { ok: false, errors };
  }
  for (const key of Object.keys(content)) {
    if (!TOP_LEVEL_KEYS.has(key)) {
      errors.push(`${root}.${key}: unknown key; known keys: ${[...TOP_LEVEL_KEYS].join(', ')}`);
    }
  }

  const labelKey = (field: string, fallback: string): string => {
    const value = content[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') {
      errors.push(`${root}.${field}: must be a string`);
      return fallback;
    }
    const problem = labelKeyProblem(value);
    if (problem)
      errors.push(`${root}.${field}: ${JSON.stringify(value)} is not a valid label key: ${problem}`);
    return value;
  };
  const namespaceLabelKey = labelKey('namespaceLabelKey', DEFAULT_TIER_MAPPING.namespaceLabelKey);
  const nodeLabelKey = labelKey('nodeLabelKey', DEFAULT_TIER_MAPPING.nodeLabelKey);
  const workloadTypeLabel = labelKey('workloadTypeLabel', DEFAULT_TIER_MAPPING.workloadTypeLabel);

  let gpuResources = DEFAULT_TIER_MAPPING.gpuResources;
  if (content.gpuResources !== undefined && content.gpuResources !== null) {
    if (!Array.isArray(content.gpuResources) || content.gpuResources.length === 0) {
      errors.push(`${root}.gpuResources: must be a non-empty list of resource names`);
    } else {
      gpuResources = content.gpuResources.map((value: unknown, index) => {
        const path = `${root}.gpuResources[${index}]`;
        if (typeof value !== 'string') {
          errors.push(`${path}: must be a string`);
          return '';
        }
        const problem = labelKeyProblem(value);
        if (problem)
          errors.push(`${path}: ${JSON.stringify(value)} is not a valid resource name: ${problem}`);
        return value;
      });
    }
  }

  const classList = (value: unknown, path: string): string[] => {
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0) {
      errors.push(`${path}: needs at least one GPU class (a string or a list of strings)`);
      return [];
    }
    return list.map((item: unknown, index) => {
      const itemPath = typeof value === 'string' ? path : `${path}[${index}]`;
      if (typeof item !== 'string' || item === '') {
        errors.push(`${itemPath}: a GPU class must be a non-empty string`);
        return '';
      }
      const problem = labelValueProblem(item);
      if (problem) errors.push(`${itemPath}: ${JSON.stringify(item)} is not a valid label value: ${problem}`);
      return item;
    });
  };

  const tiers = new Map<string, string[]>();
  const spelledAs = new Map<string, string>();
  if (!isRecord(content.tiers) || Object.keys(content.tiers).length === 0) {
    errors.push(`${root}.tiers: Required value: map each tier to its GPU class(es), e.g. "gold: h100"`);
  } else {
    for (const [tier, value] of Object.entries(content.tiers)) {
      const path = `${root}.tiers.${tier}`;
      const folded = tier.toLowerCase();
      const earlier = spelledAs.get(folded);
      if (earlier !== undefined) {
        errors.push(
          `${path}: collides with tier ${JSON.stringify(earlier)} (tier names are case-insensitive)`,
        );
        continue;
      }
      spelledAs.set(folded, tier);
      tiers.set(folded, classList(value, path));
    }
  }

  const workloadOverrides = new Map<string, Map<string, string[]>>();
  if (content.workloadOverrides !== undefined && content.workloadOverrides !== null) {
    if (!isRecord(content.workloadOverrides)) {
      errors.push(`${root}.workloadOverrides: must map tiers to {workload type: classes}`);
    } else {
      for (const [tier, byType] of Object.entries(content.workloadOverrides)) {
        const path = `${root}.workloadOverrides.${tier}`;
        if (!tiers.has(tier.toLowerCase())) {
          errors.push(`${path}: no such tier; known tiers: ${[...spelledAs.values()].join(', ') || 'none'}`);
          continue;
        }
        if (!isRecord(byType) || Object.keys(byType).length === 0) {
          errors.push(`${path}: must map workload types to GPU class(es), e.g. "inference: [a100, h100]"`);
          continue;
        }
        const types = new Map<string, string[]>();
        for (const [type, value] of Object.entries(byType)) {
          const problem = labelValueProblem(type);
          if (problem)
            errors.push(`${path}.${type}: ${JSON.stringify(type)} is not a valid label value: ${problem}`);
          types.set(type, classList(value, `${path}.${type}`));
        }
        workloadOverrides.set(tier.toLowerCase(), types);
      }
    }
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    mapping: { namespaceLabelKey, nodeLabelKey, gpuResources, tiers, workloadTypeLabel, workloadOverrides },
  };
}
