/**
 * A full garbage collection, for memory measurements: `global.gc` under --expose-gc, otherwise
 * the same function obtained by turning the flag on at run time (V8 reads it when a context is
 * made). Undefined only where neither works; callers then let memory settle instead.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function find(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

export const collectGarbage = find();
