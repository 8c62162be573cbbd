/**
 * Go's time.ParseDuration, for flags and for fields that carry Go durations ("30s", "1m0s",
 * "1.5h", "-2h45m"). Returns milliseconds (fractional below a millisecond).
 */
import { own } from './own.js';

const UNIT_NANOS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

export function parseGoDuration(text: string): number {
  const invalid = (): Error => new Error(`invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid();
  let nanos = 0;
  while (rest !== '') {
    // As Go does: a decimal number, then a unit made of every following non-digit, non-dot character.
    const match = /^(\d*)(?:\.(\d*))?([^\d.]*)/.exec(rest);
    const [whole = '', integer = '', fraction, unit = ''] = match ?? [];
    if (integer === '' && (fraction === undefined || fraction === '')) throw invalid();
    if (unit === '') throw new Error(`missing unit in duration ${JSON.stringify(text)}`);
    // The unit is the user's text: `1constructor` has an unknown unit, not Object.prototype's member.
    const scale = own(UNIT_NANOS, unit);
    if (scale === undefined)
      throw new Error(`unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`);
    nanos += Number(integer || '0') * scale + (fraction ? Number(`0.${fraction}`) * scale : 0);
    rest = rest.slice(whole.length);
  }
  return (sign * nanos) / 1e6;
}

const NANOS_PER_SECOND = 1_000_000_000n;

/** The fraction of `value / 10**precision` as Go prints it: ".5", ".25", or "" when there is none. */
function fraction(value: bigint, precision: number): { text: string; whole: bigint } {
  const scale = 10n ** BigInt(precision);
  const digits = (value % scale).toString().padStart(precision, '0').replace(/0+$/, '');
  return { text: digits === '' ? '' : `.${digits}`, whole: value / scale };
}

/**
 * Go's time.Duration.String() for a duration in milliseconds (fractions allowed, as parseGoDuration
 * returns them): "1m0s", "1.5µs", "-1h2m3.5s", "0s". The milliseconds are first rounded to whole
 * nanoseconds (a Duration's resolution) and the rest is integer arithmetic, so float error never
 * shows in the text.
 */
export function formatGoDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite duration: ${String(ms)}`);
  const nanos = BigInt(Math.round(ms * 1e6));
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  const magnitude = nanos < 0n ? -nanos : nanos;
  if (magnitude < NANOS_PER_SECOND) {
    // Below a second Go switches to the largest unit under it that keeps an integer part.
    if (magnitude < 1_000n) return `${sign}${magnitude.toString()}ns`;
    if (magnitude < 1_000_000n) {
      const micros = fraction(magnitude, 3);
      return `${sign}${micros.whole.toString()}${micros.text}µs`;
    }
    const millis = fraction(magnitude, 6);
    return `${sign}${millis.whole.toString()}${millis.text}ms`;
  }
  const seconds = fraction(magnitude, 9);
  const totalSeconds = seconds.whole;
  const totalMinutes = totalSeconds / 60n;
  const hours = totalMinutes / 60n;
  const secondsText = `${(totalSeconds % 60n).toString()}${seconds.text}s`;
  if (totalMinutes === 0n) return `${sign}${secondsText}`;
  const minutesText = `${(totalMinutes % 60n).toString()}m${secondsText}`;
  if (hours === 0n) return `${sign}${minutesText}`;
  return `${sign}${hours.toString()}h${minutesText}`;
}
