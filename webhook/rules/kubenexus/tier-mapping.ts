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
import { isAlias, isCollection, isNode, isPair, isScalar, parseDocument, visit, type Document } from 'yaml';
import { MAX_SHOWN_VALUE_CHARS, showValue, truncate } from '../../util/bounded-text.js';
import { DEFAULT_GPU_RESOURCE_NAMES, DEFAULT_TIER_LABEL_KEY } from '../../names.js';
import type { TierMapping } from '../../state.js';
import { labelKeyProblem, labelValueProblem } from '../../util/k8s-names.js';
import { failure, success, type Result } from '../../util/result.js';
import { atField, FieldPath, required, type FieldError } from '../shared/field-errors.js';

// Declared with the state that serves it, below the rules; its readers keep finding it here.
export type { TierMapping };

export const MAPPING_DATA_KEY = 'mapping.yaml';
export const DEFAULT_NODE_LABEL_KEY = 'gpu.nvidia.com/class';
export const DEFAULT_WORKLOAD_TYPE_LABEL = 'workload.kubenexus.io/type';

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

const TOP_LEVEL_KEYS = new Set([
  'namespaceLabelKey',
  'nodeLabelKey',
  'gpuResources',
  'tiers',
  'workloadTypeLabel',
  'workloadOverrides',
]);

/** Far more than a mapping holds (a few hundred tiers fit in a few KiB). */
export const MAX_MAPPING_CHARS = 8 * 1024;
/** A mapping nests four levels (workloadOverrides.gold.inference[0]); this leaves room for any style. */
export const MAX_MAPPING_DEPTH = 64;
/** Alias expansions a mapping may make: a real one needs none; a "billion laughs" needs millions. */
const MAX_ALIAS_COUNT = 100;

/**
 * An upper bound of how deeply `text` nests, read in one pass before the YAML parser sees it: the
 * parser recurses (and compiles a regular expression per level) as deep as the text nests, so
 * `- - - - …` or `[[[[…` of a few hundred KiB overflows its stack or exhausts the heap and takes
 * the process down. Counts every open flow bracket outside quotes and comments, each block
 * indentation level twice (a sequence may sit at its key's indentation) and each `- ` or `? `
 * starting a line's content; it can only overcount, which no real mapping comes near.
 */
export function yamlNestingDepth(text: string): number {
  let deepest = 0;
  let flow = 0;
  const indents: number[] = [];
  let index = 0;
  while (index < text.length) {
    let lineEnd = text.indexOf('\n', index);
    if (lineEnd < 0) lineEnd = text.length;
    let position = index;
    while (position < lineEnd && text[position] === ' ') position += 1;
    const indent = position - index;
    let compact = 0;
    if (flow === 0 && position < lineEnd && text[position] !== '#') {
      while (indents.length > 0 && (indents.at(-1) ?? 0) > indent) indents.pop();
      if (indents.length === 0 || (indents.at(-1) ?? 0) < indent) indents.push(indent);
      // `- - - x` nests one sequence per dash.
      while (
        position + 1 < lineEnd &&
        (text[position] === '-' || text[position] === '?') &&
        (text[position + 1] === ' ' || text[position + 1] === '\t')
      ) {
        compact += 1;
        position += 2;
        while (position < lineEnd && (text[position] === ' ' || text[position] === '\t')) position += 1;
      }
    }
    let quote = '';
    for (; position < lineEnd; position += 1) {
      const character = text[position];
      if (quote !== '') {
        if (character === quote) quote = '';
      } else if (character === '"' || character === "'") {
        quote = character;
      } else if (character === '#' && (position === index || /\s/.test(text[position - 1] ?? ''))) {
        break;
      } else if (character === '[' || character === '{') {
        flow += 1;
        deepest = Math.max(deepest, indents.length * 2 + compact + flow);
      } else if (character === ']' || character === '}') {
        flow = Math.max(0, flow - 1);
      }
    }
    deepest = Math.max(deepest, indents.length * 2 + compact + flow);
    index = lineEnd + 1;
  }
  return deepest;
}

/**
 * The first key that is a list or map (`? [a, b]: x`, `{x: 1}: h100`, or an alias of one): JavaScript objects can
 * only stringify such a key, so it could never name a tier or a setting. Where it is: the keys
 * of the maps around it, its line, and its text.
 */
function firstCollectionKey(
  document: Document,
  text: string,
): { parents: string[]; line: number; text: string } | undefined {
  let found: { parents: string[]; line: number; text: string } | undefined;
  visit(document, {
    Pair(_key, pair, path) {
      if (!isNode(pair.key)) return undefined;
      const key = isAlias(pair.key) ? pair.key.resolve(document) : pair.key;
      if (!isCollection(key)) return undefined;
      const [start = 0, end = start] = pair.key.range ?? [];
      found = {
        parents: path.filter(isPair).map((parent) => (isScalar(parent.key) ? String(parent.key.value) : '?')),
        line: text.slice(0, start).split('\n').length,
        text: text.slice(start, end),
      };
      return visit.BREAK;
    },
  });
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses and checks a ConfigMap's data. Every problem is reported with the path of the
 * offending field (`data[mapping.yaml].tiers.gold[0]`), so an admin knows what to fix.
 */
export function readTierMapping(data: Readonly<Record<string, string>>): Result<TierMapping, FieldError[]> {
  const errors: FieldError[] = [];
  const root = FieldPath.of('data').key(MAPPING_DATA_KEY);
  for (const key of Object.keys(data)) {
    if (key !== MAPPING_DATA_KEY)
      errors.push(
        atField(FieldPath.of('data').key(key), `unknown key; the mapping lives under ${MAPPING_DATA_KEY}`),
      );
  }
  const text = data[MAPPING_DATA_KEY];
  if (text === undefined) {
    errors.push(required(root, 'the mapping is missing'));
    return failure(errors);
  }
  if (text.length > MAX_MAPPING_CHARS) {
    errors.push(atField(root, `longer than ${MAX_MAPPING_CHARS} characters (${text.length})`));
    return failure(errors);
  }
  if (yamlNestingDepth(text) > MAX_MAPPING_DEPTH) {
    errors.push(atField(root, `nested deeper than ${MAX_MAPPING_DEPTH} levels`));
    return failure(errors);
  }
  // prettyErrors adds each error's line and context by rescanning the text: quadratic in garbage.
  // logLevel error: the library would print its warnings to stderr, outside the operator's log;
  // the one it has for a mapping (a list or map used as a key) is an error here, with its place.
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
  if (document.errors.length > 0) {
    // The parser's own messages (its error codes' texts), first line only: never a JS exception.
    for (const error of document.errors.slice(0, 5))
      errors.push(
        atField(
          root,
          `not valid YAML: ${truncate(error.message.split('\n')[0] ?? '', MAX_SHOWN_VALUE_CHARS * 2)}`,
        ),
      );
    return failure(errors);
  }
  const collectionKey = firstCollectionKey(document, text);
  if (collectionKey) {
    errors.push(
      atField(
        collectionKey.parents.reduce((path, parent) => path.child(parent), root),
        `line ${collectionKey.line}: a key must be a plain value, not a list or map: ${showValue(collectionKey.text)}`,
      ),
    );
    return failure(errors);
  }
  let content: unknown;
  try {
    content = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The yaml package refuses an alias bomb by throwing a ReferenceError while expanding it.
    if (!(error instanceof ReferenceError)) throw error;
    errors.push(atField(root, `expands more than ${MAX_ALIAS_COUNT} YAML aliases`));
    return failure(errors);
  }
  if (!isRecord(content)) {
    errors.push(atField(root, 'must be a YAML mapping with at least the key "tiers"'));
    return failure(errors);
  }
  for (const key of Object.keys(content)) {
    if (!TOP_LEVEL_KEYS.has(key)) {
      errors.push(atField(root.child(key), `unknown key; known keys: ${[...TOP_LEVEL_KEYS].join(', ')}`));
    }
  }

  const labelKey = (field: string, fallback: string): string => {
    const value = content[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') {
      errors.push(atField(root.child(field), 'must be a string'));
      return fallback;
    }
    const problem = labelKeyProblem(value);
    if (problem)
      errors.push(
        atField(root.child(field), `${JSON.stringify(value)} is not a valid label key: ${problem}`),
      );
    return value;
  };
  const namespaceLabelKey = labelKey('namespaceLabelKey', DEFAULT_TIER_MAPPING.namespaceLabelKey);
  const nodeLabelKey = labelKey('nodeLabelKey', DEFAULT_TIER_MAPPING.nodeLabelKey);
  const workloadTypeLabel = labelKey('workloadTypeLabel', DEFAULT_TIER_MAPPING.workloadTypeLabel);

  /** A list item that must be a string `problemOf` accepts; '' stands in for one that is no string. */
  const stringItem = (
    item: unknown,
    path: FieldPath,
    expected: { notString: string; allowEmpty: boolean; what: string },
    problemOf: (text: string) => string | undefined,
  ): string => {
    if (typeof item !== 'string' || (!expected.allowEmpty && item === '')) {
      errors.push(atField(path, expected.notString));
      return '';
    }
    const problem = problemOf(item);
    if (problem)
      errors.push(atField(path, `${JSON.stringify(item)} is not a valid ${expected.what}: ${problem}`));
    return item;
  };
  const RESOURCE_NAME = { notString: 'must be a string', allowEmpty: true, what: 'resource name' };
  const GPU_CLASS = {
    notString: 'a GPU class must be a non-empty string',
    allowEmpty: false,
    what: 'label value',
  };

  let gpuResources = DEFAULT_TIER_MAPPING.gpuResources;
  if (content.gpuResources !== undefined && content.gpuResources !== null) {
    if (!Array.isArray(content.gpuResources) || content.gpuResources.length === 0) {
      errors.push(atField(root.child('gpuResources'), 'must be a non-empty list of resource names'));
    } else {
      gpuResources = content.gpuResources.map((value: unknown, index) =>
        stringItem(value, root.child('gpuResources').index(index), RESOURCE_NAME, labelKeyProblem),
      );
    }
  }

  const classList = (value: unknown, path: FieldPath): string[] => {
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0) {
      errors.push(atField(path, 'needs at least one GPU class (a string or a list of strings)'));
      return [];
    }
    return list.map((item: unknown, index) =>
      stringItem(item, typeof value === 'string' ? path : path.index(index), GPU_CLASS, labelValueProblem),
    );
  };

  const tiers = new Map<string, string[]>();
  const spelledAs = new Map<string, string>();
  if (!isRecord(content.tiers) || Object.keys(content.tiers).length === 0) {
    errors.push(required(root.child('tiers'), 'map each tier to its GPU class(es), e.g. "gold: h100"'));
  } else {
    for (const [tier, value] of Object.entries(content.tiers)) {
      const path = root.child('tiers', tier);
      const folded = tier.toLowerCase();
      const earlier = spelledAs.get(folded);
      if (earlier !== undefined) {
        errors.push(
          atField(path, `collides with tier ${JSON.stringify(earlier)} (tier names are case-insensitive)`),
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
      errors.push(atField(root.child('workloadOverrides'), 'must map tiers to {workload type: classes}'));
    } else {
      for (const [tier, byType] of Object.entries(content.workloadOverrides)) {
        const path = root.child('workloadOverrides', tier);
        if (!tiers.has(tier.toLowerCase())) {
          errors.push(
            atField(path, `no such tier; known tiers: ${[...spelledAs.values()].join(', ') || 'none'}`),
          );
          continue;
        }
        if (!isRecord(byType) || Object.keys(byType).length === 0) {
          errors.push(
            atField(path, 'must map workload types to GPU class(es), e.g. "inference: [a100, h100]"'),
          );
          continue;
        }
        const types = new Map<string, string[]>();
        for (const [type, value] of Object.entries(byType)) {
          const problem = labelValueProblem(type);
          if (problem)
            errors.push(
              atField(path.child(type), `${JSON.stringify(type)} is not a valid label value: ${problem}`),
            );
          types.set(type, classList(value, path.child(type)));
        }
        workloadOverrides.set(tier.toLowerCase(), types);
      }
    }
  }

  if (errors.length > 0) return failure(errors);
  return success({
    namespaceLabelKey,
    nodeLabelKey,
    gpuResources,
    tiers,
    workloadTypeLabel,
    workloadOverrides,
  });
}
