/**
 * Go's time.ParseDuration, for flags and for fields that carry Go durations ("30s", "1m0s",
 * "1.5h", "-2h45m"). Returns milliseconds (fractional below a millisecond).
 */
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
    const scale = UNIT_NANOS[unit];
    if (scale === undefined)
      throw new Error(`unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`);
    nanos += Number(integer || '0') * scale + (fraction ? Number(`0.${fraction}`) * scale : 0);
    rest = rest.slice(whole.length);
  }
  return (sign * nanos) / 1e6;
}
