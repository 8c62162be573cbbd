/**
 * The sink of a watched kind that the store keeps as one view per object in an index: each
 * object is reduced to its view as it arrives, and a relist drops the views of objects it no
 * longer lists.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import type { ReflectorSink } from '../kube/reflector.js';

export interface KeyedIndex<V> {
  set(key: string, value: V): unknown;
  delete(key: string): unknown;
}

/** A view's key and value, or undefined for an object the index does not keep. */
export type ViewOf<V> = (object: JsonObject) => [string, V] | undefined;

/** A sink that can say how many objects it keeps. */
export interface CountingSink extends ReflectorSink {
  readonly size: number;
}

export function keyedSink<V>(
  index: KeyedIndex<V>,
  view: ViewOf<V>,
  changed: () => void = () => undefined,
): CountingSink {
  /** The keys in the index, each with the list that last saw it. */
  const present = new Map<string, number>();
  let epoch = 0;
  return {
    get size() {
      return present.size;
    },
    listing() {
      epoch++;
    },
    put(object) {
      const entry = view(object);
      if (!entry) return;
      index.set(entry[0], entry[1]);
      present.set(entry[0], epoch);
      changed();
    },
    remove(object) {
      const entry = view(object);
      if (!entry) return;
      index.delete(entry[0]);
      present.delete(entry[0]);
      changed();
    },
    listed() {
      let dropped = false;
      for (const [key, seenBy] of present) {
        if (seenBy === epoch) continue;
        index.delete(key);
        present.delete(key);
        dropped = true;
      }
      if (dropped) changed();
    },
  };
}
