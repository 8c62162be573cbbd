/**
 * Loaded into the operator's process by the fuzz-memory bench (`node --expose-gc --import` this
 * file, with an IPC channel): answers what only the process itself can see of its memory (V8's
 * heap, external memory, array buffers) and collects garbage when asked. The resident memory is
 * read from outside, in /proc. Node runs this file by stripping its types, so the bundle runs as
 * the image runs it, without tsx; it imports nothing but Node's own modules.
 */
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

export interface ProbeRequest {
  id: number;
  /** Collect garbage (a full, compacting collection) before measuring. */
  gc: boolean;
}

export interface ProbeAnswer {
  id: number;
  rss: number;
  heapUsed: number;
  /** What V8 has committed for its heap, and of that what is resident. */
  heapTotal: number;
  heapPhysical: number;
  heapLimit: number;
  external: number;
  arrayBuffers: number;
  /** What V8 itself allocated with malloc (zones, compilers), outside its heap. */
  malloced: number;
  /** Committed and used per heap space, in bytes. */
  spaces: Record<string, { committed: number; used: number }>;
}

const collect = (globalThis as { gc?: (options?: { type: 'major'; execution: 'sync' }) => void }).gc;

function measure(id: number): ProbeAnswer {
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  return {
    id,
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    heapPhysical: heap.total_physical_size,
    heapLimit: heap.heap_size_limit,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    malloced: heap.malloced_memory,
    spaces: Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [
        space.space_name,
        { committed: space.physical_space_size, used: space.space_used_size },
      ]),
    ),
  };
}

process.on('message', (message: ProbeRequest) => {
  if (message.gc) collect?.({ type: 'major', execution: 'sync' });
  process.send?.(measure(message.id));
});
// The channel must not keep the operator alive once it has stopped (SIGTERM).
process.channel?.unref();
