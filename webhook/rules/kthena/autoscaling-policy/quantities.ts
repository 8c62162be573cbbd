/**
 * What Kthena's AutoscalingPolicy validator asks of a `resource.Quantity`: its canonical text
 * (`String()`, and what json.Marshal writes), its `AsFloat64Slow()`, and `Cmp`.
 */
import type { GoQuantity } from '../../../util/quantity.js';
import { canonicalQuantity, readQuantity } from '../../../util/quantity.js';

/** Go's zero Quantity, which an absent field decodes to. */
export const ZERO_QUANTITY: GoQuantity = { text: '0', sign: 0, infinite: false };

/** Go caps a quantity it cannot hold exactly at 2^63-1 (its largest int64 amount). */
const CAPPED_UNITS = 2n ** 63n - 1n;
const NANO = 1_000_000_000n;

export const quantityText = (quantity: GoQuantity): string => canonicalQuantity(quantity.text.trim());

/** The amount in nano-units; past 2^63-1 units, Go's cap, with the sign kept. */
function nanosOf(quantity: GoQuantity): bigint {
  const read = readQuantity(quantity.text);
  if (read.ok) return read.value;
  return BigInt(quantity.sign) * CAPPED_UNITS * NANO;
}

export function quantityFloat(quantity: GoQuantity): number {
  if (quantity.infinite) return quantity.sign * Infinity;
  return Number(nanosOf(quantity)) / 1e9;
}

/** `a.Cmp(b)`: -1, 0 or 1. */
export function compareQuantities(a: GoQuantity, b: GoQuantity): number {
  const x = nanosOf(a);
  const y = nanosOf(b);
  return x === y ? 0 : x < y ? -1 : 1;
}
