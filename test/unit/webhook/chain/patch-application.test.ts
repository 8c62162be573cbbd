/**
 * The chain applies the mutating webhooks' patches as the API server does. Every patch our
 * mutating webhooks produce, from a seeded run of the fuzz generator over their paths and from
 * seeded variants of the fuzz seeds (lists grown until the json-diff replaces them whole, labels
 * added until it replaces the map, keys that need ~0 and ~1), is applied by the chain's applier
 * and by fast-json-patch (immutable, validating): the results must be identical, and equal to what
 * the rule returned. The points of RFC 6902 where appliers differ are asserted one by one, as the
 * API server's applier (evanphx/json-patch v4) decides them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import { pino } from 'pino';
import { applyPatch } from '../../../../webhook/chain/apply-patch.js';
import type { JsonPatch } from '../../../../webhook/admission/response.js';
import type {
  AdmissionRequest,
  JsonObject,
  JsonValue,
  KubeObject,
} from '../../../../webhook/admission/types.js';
import { admissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import { readReview } from '../../../../webhook/server/app.js';
import { decide } from '../../../../webhook/server/decide.js';
import type { WebhookEntry } from '../../../../webhook/table.js';
import { generateCase } from '../../../fuzz/generate.js';
import { caseSeed, mulberry32, type Rng } from '../../../fuzz/prng.js';
import { seeds } from '../../../fuzz/seeds.js';
import { fuzzState, fuzzWebhooks } from '../../../fuzz/world.js';

const SEED = 20_261_125;
/** Fuzz cases generated; about a fifth reach a mutating rule that patches. */
const FUZZ_CASES = 1200;
/** Variants of each mutating seed. */
const VARIANTS = 400;
/** Fuzz bodies larger than this are skipped: they exercise the reader's limits, not patches. */
const MAX_BODY_BYTES = 256 * 1024;

interface Produced {
  source: string;
  object: KubeObject;
  patch: JsonPatch;
  /** What the rule made of the object, as JSON carries it. */
  mutated: JsonValue;
}

const mutating = new Map(
  fuzzWebhooks()
    .filter((entry) => entry.type === 'mutating')
    .map((entry) => [entry.path, entry]),
);
const state = fuzzState();
const logger = pino({ level: 'silent' });
const metrics = admissionMetrics();

function produce(entry: WebhookEntry, request: AdmissionRequest, source: string): Produced | undefined {
  const object = request.object;
  if (!object) return undefined;
  const before = JSON.stringify(object);
  const judgement = decide(entry, request, state, logger, metrics);
  // Rules are pure: the object the patch is computed against is the one the API server holds.
  assert.equal(JSON.stringify(object), before, `${source}: the rule changed its input`);
  const mutated = judgement.decision.allowed ? judgement.decision.mutated : undefined;
  if (!judgement.patch || judgement.patch.length === 0 || !mutated) return undefined;
  return {
    source,
    object,
    patch: judgement.patch,
    mutated: JSON.parse(JSON.stringify(mutated)) as JsonValue,
  };
}

function fromFuzz(): Produced[] {
  const out: Produced[] = [];
  for (let index = 0; index < FUZZ_CASES; index += 1) {
    const fuzzCase = generateCase(SEED, index);
    const entry = mutating.get(fuzzCase.path);
    if (!entry || fuzzCase.method !== 'POST' || fuzzCase.body.length > MAX_BODY_BYTES) continue;
    let read: ReturnType<typeof readReview>;
    try {
      read = readReview(fuzzCase.body);
    } catch {
      continue; // an envelope the server refuses before any rule
    }
    if (read.unread) continue;
    const produced = produce(entry, read.request, `fuzz case ${SEED}/${index} (${fuzzCase.description})`);
    if (produced) out.push(produced);
  }
  return out;
}

const isMap = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Label keys and values the seeds' rules select on, and keys whose pointers need ~0 and ~1. */
const LABELS: readonly [string, string][] = [
  ['app', 'web'],
  ['koordinator-colocation-pod', 'true'],
  ['team', 'a'],
  ['pod.koordinator.sh/mutating-update', 'true'],
  ['example.com/a~b', 'x'],
  ['~', 'tilde'],
  ['a/b/c', 'slashes'],
];

/** Every list in `value`, each grown to `length` items by copies (renamed, so names stay unique). */
function growLists(value: JsonValue, rng: Rng): JsonValue {
  if (Array.isArray(value)) {
    const items = value.map((item) => growLists(item, rng));
    if (items.length === 0 || !rng.chance(0.5)) return items;
    const length = rng.pick([2, 3, 5, 8, 24]);
    return Array.from({ length }, (_, index) => {
      const item = structuredClone(items[index % items.length] as JsonValue);
      if (isMap(item) && typeof item.name === 'string' && index >= items.length)
        item.name = `${item.name}-${index}`;
      return item;
    });
  }
  if (!isMap(value)) return value;
  const copy: JsonObject = {};
  for (const [key, item] of Object.entries(value)) copy[key] = growLists(item, rng);
  return copy;
}

function variant(object: KubeObject, rng: Rng): KubeObject {
  const next = growLists(object, rng) as KubeObject;
  const labels: JsonObject = isMap(next.metadata.labels) ? { ...next.metadata.labels } : {};
  for (const [key, value] of LABELS) if (rng.chance(0.4)) labels[key] = value;
  for (let extra = rng.pick([0, 0, 1, 6]); extra > 0; extra -= 1) labels[`extra-${rng.int(1000)}`] = 'v';
  next.metadata = { ...next.metadata, labels };
  if (rng.chance(0.2)) delete next.metadata.annotations;
  return next;
}

function fromSeedVariants(): Produced[] {
  const out: Produced[] = [];
  for (const [seedIndex, seed] of seeds().entries()) {
    const entry = mutating.get(seed.path);
    if (!entry || !isMap(seed.request.object)) continue;
    for (let index = 0; index < VARIANTS; index += 1) {
      const rng = mulberry32(caseSeed(SEED + seedIndex, index));
      const object = variant(seed.request.object as KubeObject, rng);
      const request = { ...(seed.request as unknown as AdmissionRequest), uid: `v-${index}`, object };
      const produced = produce(entry, request, `${seed.label}, variant ${index}`);
      if (produced) out.push(produced);
    }
  }
  return out;
}

type Applied = { ok: true; document: JsonValue } | { ok: false };

const asJson = (applied: Applied): Applied =>
  applied.ok ? { ok: true, document: JSON.parse(JSON.stringify(applied.document)) as JsonValue } : applied;
const isJson = (value: unknown): boolean => {
  try {
    assert.deepEqual(JSON.parse(JSON.stringify(value)), value);
    return true;
  } catch {
    return false;
  }
};

function attempt(apply: () => JsonValue): Applied {
  try {
    return { ok: true, document: apply() };
  } catch {
    return { ok: false };
  }
}

const ours = (object: KubeObject, patch: JsonPatch): Applied => attempt(() => applyPatch(object, patch));
const library = (object: KubeObject, patch: readonly fastJsonPatch.Operation[]): Applied =>
  attempt(
    () =>
      fastJsonPatch.applyPatch(object, structuredClone(patch) as fastJsonPatch.Operation[], true, false)
        .newDocument,
  );

/** How the corpus exercises the applier: operations, whole replacements, pointer escapes. */
function shapes(patch: JsonPatch): string[] {
  return patch.flatMap((operation) => {
    const found: string[] = [operation.op];
    if (operation.op !== 'remove' && isMap(operation.value)) found.push(`${operation.op} of a map`);
    if (operation.op !== 'remove' && Array.isArray(operation.value)) found.push(`${operation.op} of a list`);
    if (/\/\d+(\/|$)/.test(operation.path)) found.push('through a list index');
    if (operation.path.includes('~1')) found.push('~1');
    if (operation.path.includes('~0')) found.push('~0');
    return found;
  });
}

describe('patch application', () => {
  it('gives what fast-json-patch gives, and what the rule made, for every patch our mutating webhooks produce', () => {
    const fuzzed = fromFuzz();
    const corpus = [...fuzzed, ...fromSeedVariants()];
    const seen = new Map<string, number>();
    for (const { source, object, patch, mutated } of corpus) {
      const frozen = JSON.stringify(object);
      const byUs = ours(object, patch);
      const byLibrary = library(object, patch);
      assert.equal(JSON.stringify(object), frozen, `${source}: an applier changed its input`);
      const where = `${source}: ${JSON.stringify(patch).slice(0, 500)}`;
      // Fuzz number literals past double range read as ±Infinity, which no API server sends and
      // JSON writes as null; fast-json-patch's immutable mode copies through JSON text, so it has
      // null where ours still has Infinity. Compared as JSON then; exactly otherwise.
      if (isJson(object)) assert.deepEqual(byUs, byLibrary, where);
      else assert.deepEqual(asJson(byUs), asJson(byLibrary), where);
      assert.deepEqual(asJson(byUs), { ok: true, document: mutated }, source);
      for (const shape of shapes(patch)) seen.set(shape, (seen.get(shape) ?? 0) + 1);
    }
    assert.ok(corpus.length >= 3000, `${corpus.length} patches`);
    assert.ok(fuzzed.length >= 100, `${fuzzed.length} patches from the fuzz run`);
    // No key a rule writes under contains `~` (label keys, resource names and field names cannot),
    // so ~0 is asserted on its own below.
    for (const shape of [
      'add',
      'replace',
      'remove',
      'add of a map',
      'replace of a map',
      'replace of a list',
      'through a list index',
      '~1',
    ])
      assert.ok((seen.get(shape) ?? 0) > 0, `no patch has ${shape}: ${JSON.stringify([...seen])}`);
  });

  it('decides the points of RFC 6902 that matter as the API server does', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { a: '1', 'x/y': 's', 't~u': 't' } },
      spec: { containers: [{ name: 'c0' }, { name: 'c1' }] },
    } satisfies KubeObject;
    const labels = (patch: readonly object[]): unknown => applyPatch(pod, patch as JsonPatch).metadata.labels;
    // add on an existing key replaces its value.
    assert.deepEqual(labels([{ op: 'add', path: '/metadata/labels/a', value: '2' }]), {
      ...pod.metadata.labels,
      a: '2',
    });
    // `-` appends to a list.
    assert.deepEqual(
      applyPatch(pod, [{ op: 'add', path: '/spec/containers/-', value: { name: 'c2' } }]).spec,
      { containers: [{ name: 'c0' }, { name: 'c1' }, { name: 'c2' }] },
    );
    // test: a patch applies after a test that holds, and not at all after one that fails.
    const afterTest = (value: string): object[] => [
      { op: 'test', path: '/metadata/name', value },
      { op: 'add', path: '/metadata/labels/b', value: 'ok' },
    ];
    assert.deepEqual(labels(afterTest('p')), { ...pod.metadata.labels, b: 'ok' });
    assert.throws(() => labels(afterTest('q')), /Test operation failed/);
    // ~1 is `/` and ~0 is `~` in a key.
    assert.deepEqual(
      labels([
        { op: 'replace', path: '/metadata/labels/x~1y', value: 'S' },
        { op: 'replace', path: '/metadata/labels/t~0u', value: 'T' },
      ]),
      { a: '1', 'x/y': 'S', 't~u': 'T' },
    );
    // A path whose parent is missing fails, and so does the whole patch.
    assert.throws(() => applyPatch(pod, [{ op: 'add', path: '/metadata/annotations/k', value: 'v' }]));
    assert.deepEqual(pod.metadata.labels, { a: '1', 'x/y': 's', 't~u': 't' }, 'the input is left alone');
    // Where fast-json-patch and the API server's applier differ (a replace of an absent key, which
    // the API server adds; negative and leading-zero list indexes; an add at the root), no patch of
    // ours goes: every patch above applies identically.
  });
});
