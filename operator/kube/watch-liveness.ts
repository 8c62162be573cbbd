/**
 * Whether the watches prove they are alive (docs/operations.md, "Stalled watches"): bookmarks
 * asked for, watches of under a minute (timeoutSeconds), the silence bound, TCP keepalive. Always,
 * but in the reference of the idle-CPU bench (test/bench/idle-cpu.ts): it starts the same
 * operator with ADMISSION_BENCH_WATCH_LIVENESS=off, to measure what they cost against the same
 * process without them. Without them a frozen watch goes unnoticed: never set it in a cluster.
 */
export const watchLiveness: boolean = process.env.ADMISSION_BENCH_WATCH_LIVENESS !== 'off';
