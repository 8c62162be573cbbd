/**
 * The RFC 6902 patch that turns an object under review into what a rule made of it. Rules copy
 * only what they change, so every subtree the original and the result share is skipped at once
 * by reference. Values are referenced, not copied: the patch is serialised right away.
 *
 * The patch is coarse where that is smaller: a map whose entries mostly changed is replaced whole
 * (a pod of 2,000 containers that each gain five batch resources gets 2,000 replaced resource
 * lists, not 10,000 single-key additions); so is a list whose items mostly changed, each by
 * several operations (2,000 containers whose GPU requests are each split into three resources:
 * one list, a fifth the bytes of 8,000 operations); and a list whose length changed is replaced
 * whole, so no index ever shifts under a later operation.
 */
import { own } from '../util/own.js';
import type { JsonObject, JsonValue } from './types.js';

export type PatchOperation =
  { op: 'add' | 'replace'; path: string; value: JsonValue } | { op: 'remove'; path: string };

/** Fewer changes than this in one map are always spelt out, as a field-by-field differ would. */
const MIN_COARSE_CHANGES = 4;
const isMap = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 6901: `~` and `/` inside a key. */
const pointerSegment = (key: string): string =>
  key.includes('~') || key.includes('/') ? key.replaceAll('~', '~0').replaceAll('/', '~1') : key;

/** Appends the operations for two maps; returns how many of their entries changed. */
function diffMaps(original: JsonObject, mutated: JsonObject, path: string, out: PatchOperation[]): number {
  let changed = 0;
  for (const key of Object.keys(original)) {
    if (own(mutated, key) !== undefined) continue;
    out.push({ op: 'remove', path: `${path}/${pointerSegment(key)}` });
    changed += 1;
  }
  for (const [key, value] of Object.entries(mutated)) {
    // A rule may leave a key set to undefined: JSON has no such value, so the key is absent.
    if ((value as JsonValue | undefined) === undefined) continue;
    const before = own(original, key);
    const at = `${path}/${pointerSegment(key)}`;
    if (before === undefined) {
      out.push({ op: 'add', path: at, value });
      changed += 1;
      continue;
    }
    const mark = out.length;
    diffValues(before, value, at, out);
    if (out.length > mark) changed += 1;
  }
  return changed;
}

function diffValues(original: JsonValue, mutated: JsonValue, path: string, out: PatchOperation[]): void {
  if (original === mutated) return;
  if (isMap(original) && isMap(mutated)) {
    const mark = out.length;
    const changed = diffMaps(original, mutated, path, out);
    // Mostly changed: one replacement says it in fewer bytes than an operation per entry.
    if (path !== '' && changed >= MIN_COARSE_CHANGES && changed * 2 > Object.keys(mutated).length) {
      out.length = mark;
      out.push({ op: 'replace', path, value: mutated });
    }
    return;
  }
  if (Array.isArray(original) && Array.isArray(mutated) && original.length === mutated.length) {
    const mark = out.length;
    let changed = 0;
    for (let index = 0; index < mutated.length; index += 1) {
      const before = out.length;
      diffValues(original[index] as JsonValue, mutated[index] as JsonValue, `${path}/${index}`, out);
      if (out.length > before) changed += 1;
    }
    // As for maps: most items changed, each by several operations, is one replacement.
    if (changed >= MIN_COARSE_CHANGES && changed * 2 > mutated.length && out.length - mark > changed) {
      out.length = mark;
      out.push({ op: 'replace', path, value: mutated });
    }
    return;
  }
  out.push({ op: 'replace', path, value: mutated });
}

/** The operations that turn `original` into `mutated` (both JSON objects); none when they are equal. */
export function diffJson(original: JsonObject, mutated: JsonObject): PatchOperation[] {
  const out: PatchOperation[] = [];
  diffValues(original, mutated, '', out);
  return out;
}
