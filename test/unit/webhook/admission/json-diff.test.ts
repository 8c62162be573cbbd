import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import { diffJson } from '../../../../webhook/admission/json-diff.js';
import type { JsonObject, JsonValue } from '../../../../webhook/admission/types.js';
import { mulberry32 } from '../../../fuzz/prng.js';

/** The project's seeded generator (mulberry32), so a failing case can be replayed from its seed. */
const random = (seed: number): (() => number) => {
  const rng = mulberry32(seed);
  return () => rng.next();
};

const KEYS = ['a', 'b', 'c', 'd', 'e', 'x/y', 'm~n', '0'];

function value(next: () => number, depth: number): JsonValue {
  const roll = next();
  if (depth > 3 || roll < 0.3) return [1, 'two', true, null][Math.floor(next() * 4)] ?? null;
  if (roll < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  return map(next, depth + 1);
}

function map(next: () => number, depth: number): JsonObject {
  const out: JsonObject = {};
  for (const key of KEYS) if (next() < 0.4) out[key] = value(next, depth);
  return out;
}

/** A copy of `original` with random changes, sharing what it does not change. */
function mutate(original: JsonValue, next: () => number, depth: number): JsonValue {
  if (next() < 0.3) return original;
  if (Array.isArray(original)) {
    const copy = original.map((item) => mutate(item, next, depth + 1));
    if (next() < 0.2) copy.push(value(next, depth));
    return copy;
  }
  if (typeof original === 'object' && original !== null) {
    const copy: JsonObject = {};
    for (const [key, item] of Object.entries(original))
      if (next() > 0.15) copy[key] = mutate(item, next, depth + 1);
    for (const key of KEYS) if (!(key in copy) && next() < 0.15) copy[key] = value(next, depth);
    return copy;
  }
  return next() < 0.5 ? value(next, depth) : original;
}

const applied = (original: JsonObject, operations: ReturnType<typeof diffJson>): unknown =>
  fastJsonPatch.applyPatch(structuredClone(original), structuredClone(operations), true, false).newDocument;

describe('diffJson', () => {
  it('turns the original into the result, for 2,000 random pairs', () => {
    const next = random(20_261_123);
    for (let round = 0; round < 2000; round += 1) {
      const original = map(next, 0);
      const mutated = mutate(original, next, 0) as JsonObject;
      assert.deepEqual(applied(original, diffJson(original, mutated)), mutated, `round ${round}`);
    }
  });

  it('says nothing for equal objects, shared or copied', () => {
    const original = { a: { b: [1, { c: 'd' }] } };
    assert.deepEqual(diffJson(original, original), []);
    assert.deepEqual(diffJson(original, structuredClone(original)), []);
  });

  it('spells out a few changes, escaping keys as JSON pointers', () => {
    const original = { metadata: { labels: { 'a/b': 'x', 'c~d': 'y', keep: 'z' } } };
    const mutated = { metadata: { labels: { 'a/b': 'X', 'c~d': 'y', keep: 'z', new: 'n' } } };
    assert.deepEqual(diffJson(original, mutated), [
      { op: 'replace', path: '/metadata/labels/a~1b', value: 'X' },
      { op: 'add', path: '/metadata/labels/new', value: 'n' },
    ]);
  });

  it('replaces a map whole when most of it changed, and a list whose length changed', () => {
    const original = { requests: { cpu: '1', memory: '1Gi', keep: '1' }, list: [1, 2] };
    const mutated = {
      requests: { 'batch-cpu': '1000', 'batch-memory': '1Gi', keep: '1', extra: '2' },
      list: [1, 2, 3],
    };
    assert.deepEqual(diffJson(original, mutated), [
      { op: 'replace', path: '/requests', value: mutated.requests },
      { op: 'replace', path: '/list', value: [1, 2, 3] },
    ]);
  });

  it('replaces a list whole when most items changed, each by several operations, and not otherwise', () => {
    const containers = Array.from({ length: 6 }, (_, i) => ({ name: `c${i}`, requests: { gpu: '100' } }));
    const split = containers.map((c) => ({
      ...c,
      requests: { 'gpu-core': '100', 'gpu-memory-ratio': '100' },
    }));
    assert.deepEqual(diffJson({ containers }, { containers: split }), [
      { op: 'replace', path: '/containers', value: split },
    ]);
    // One operation per changed item is as small as it gets: spelt out.
    const renamed = containers.map((c) => ({ ...c, name: `${c.name}x` }));
    assert.equal(diffJson({ containers }, { containers: renamed }).length, 6);
    // Only a few items changed: spelt out.
    const one = containers.map((c, i) => (i === 0 ? split[0]! : c));
    assert.equal(diffJson({ containers }, { containers: one }).length, 3);
  });

  it('treats an undefined entry as absent, as JSON does', () => {
    assert.deepEqual(diffJson({ a: 1, b: 2 }, { a: 1, b: undefined } as unknown as JsonObject), [
      { op: 'remove', path: '/b' },
    ]);
  });
});
