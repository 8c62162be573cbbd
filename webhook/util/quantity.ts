/**
 * Exact Kubernetes quantity arithmetic for the quota rules: sums and comparisons must not
 * drift the way floats do ("0.1" + "0.2" CPUs). A quantity becomes a bigint count of
 * nano-units, the finest unit Kubernetes has; anything finer rounds up, as Kubernetes does.
 * client-node's quantityToScalar returns a float or a bigint depending on the suffix, which
 * is fine for "is it positive" but not for sums, hence this module.
 */
const NANO = 1_000_000_000n;

const DECIMAL_SUFFIX: Record<string, bigint> = {
  n: 1n,
  u: 1_000n,
  m: 1_000_000n,
  '': NANO,
  k: 1_000n * NANO,
  M: 1_000_000n * NANO,
  G: 1_000_000_000n * NANO,
  T: 1_000_000_000_000n * NANO,
  P: 1_000_000_000_000_000n * NANO,
  E: 1_000_000_000_000_000_000n * NANO,
};
const BINARY_SUFFIX: Record<string, bigint> = {
  Ki: 1024n * NANO,
  Mi: 1024n ** 2n * NANO,
  Gi: 1024n ** 3n * NANO,
  Ti: 1024n ** 4n * NANO,
  Pi: 1024n ** 5n * NANO,
  Ei: 1024n ** 6n * NANO,
};

const FORMAT = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Parses a quantity into nano-units; throws with the reason on anything Kubernetes would refuse. */
export function parseQuantity(text: string): bigint {
  const match = FORMAT.exec(text.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) {
    throw new Error(`${JSON.stringify(text)} is not a quantity (e.g. 500m, 2, 1.5Gi, 1e3)`);
  }
  const [, sign = '', integer = '', fraction = '', suffix, exponent] = match;
  const digits = BigInt(`${integer || '0'}${fraction}`);
  let numerator = digits;
  let denominator = 10n ** BigInt(fraction.length);
  if (exponent !== undefined) {
    const power = Number(exponent);
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
    numerator *= NANO;
  } else {
    numerator *= BINARY_SUFFIX[suffix ?? ''] ?? DECIMAL_SUFFIX[suffix ?? ''] ?? NANO;
  }
  // Round up to a whole nano-unit, as Kubernetes rounds up to its smallest unit.
  const nanos = (numerator + denominator - 1n) / denominator;
  return sign === '-' ? -nanos : nanos;
}

/** Formats nano-units the way Kubernetes would print them in a canonical form close to `like`. */
export function formatQuantity(nanos: bigint, like = ''): string {
  const negative = nanos < 0n;
  const value = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (value === 0n) return '0';
  if (/i$/.test(like) && value % NANO === 0n) {
    const whole = value / NANO;
    for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const) {
      const unit = (BINARY_SUFFIX[suffix] ?? NANO) / NANO;
      if (whole % unit === 0n) return `${sign}${whole / unit}${suffix}`;
    }
    return `${sign}${whole}`;
  }
  for (const suffix of ['E', 'P', 'T', 'G', 'M', 'k', '', 'm', 'u', 'n'] as const) {
    const unit = DECIMAL_SUFFIX[suffix] ?? NANO;
    if (value % unit === 0n) return `${sign}${value / unit}${suffix}`;
  }
  return `${sign}${value}n`;
}
