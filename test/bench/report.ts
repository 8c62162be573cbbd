/** How the bench prints its figures: each with its reference, ratio and target, met or missed. */

export interface Result {
  name: string;
  value: number;
  unit: string;
  target: number;
  /** true when lower is better. */
  lower: boolean;
}
export const results: Result[] = [];

const decimals = (unit: string): number => (unit === 'ms' || unit === '×' || unit === '% core' ? 2 : 0);
const show = (value: number, unit: string): string => value.toFixed(decimals(unit));

export function record(name: string, value: number, unit: string, target: number, lower = true): void {
  results.push({ name, value, unit, target, lower });
  const met = lower ? value <= target : value >= target;
  console.log(
    `${met ? 'met ' : 'MISS'}  ${name.padEnd(66)} ${show(value, unit).padStart(9)} ${unit.padEnd(6)} (target ${lower ? '≤' : '≥'} ${target})`,
  );
}

/** A figure with no target: context for the measurements around it, not counted as met or missed. */
export function inform(name: string, value: number, unit: string): void {
  console.log(`info  ${name.padEnd(66)} ${show(value, unit).padStart(9)} ${unit}`);
}

/** A share of a reference as a percentage, recorded against a floor. */
export function recordShare(name: string, value: number, reference: number, floorPercent: number): void {
  record(name, (100 * value) / reference, '%', floorPercent, false);
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function summary(): void {
  const misses = results.filter((r) => (r.lower ? r.value > r.target : r.value < r.target));
  console.log(`\n${results.length - misses.length} of ${results.length} targets met`);
}
