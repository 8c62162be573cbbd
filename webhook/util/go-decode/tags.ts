/**
 * go-playground validator tags (`min=0,max=100,gtfield=memoryEvictLowerPercent`), which run after
 * decoding with go-playground's semantics: every tagged field is `omitempty` (absent, null and ""
 * are skipped, an explicit 0 is checked), rules run in order and the first failing one is the
 * field's only error, bounds are inclusive for min/max and strict for gt/lt, and gtfield/ltfield
 * fail when the other field is unset. The struct, list or map holding a tagged decoder checks it.
 */
import { type FieldPath, invalid } from '../../rules/shared/field-errors.js';
import { type Decoder, type Decoding, report } from './decoding.js';

type Tag =
  | { rule: 'min' | 'max' | 'gt' | 'lt'; bound: number }
  | { rule: 'gtfield' | 'ltfield'; field: string }
  | { rule: 'oneof'; values: readonly string[] };

/** A decoder carrying validator tags, which its enclosing struct, list or map evaluates. */
type TaggedDecoder<T> = Decoder<T> & { readonly tags: readonly Tag[] };

/** Attaches validator tags, written as in Go's struct tags without the implied `omitempty`. */
export function tagged<T extends bigint | number | string>(decoder: Decoder<T>, tags: string): Decoder<T> {
  const parsed = tags.split(',').map((text): Tag => {
    const [rule = '', argument = ''] = text.split('=');
    switch (rule) {
      case 'min':
      case 'max':
      case 'gt':
      case 'lt': {
        const bound = Number(argument);
        if (argument === '' || !Number.isFinite(bound)) throw new Error(`bad bound in tag ${text}`);
        return { rule, bound };
      }
      case 'gtfield':
      case 'ltfield':
        return { rule, field: argument };
      case 'oneof':
        return { rule, values: argument.split(' ') };
      default:
        throw new Error(`unsupported validator tag ${text}`);
    }
  });
  const wrapped: Decoder<T> = (node, path, out) => decoder(node, path, out);
  return Object.assign(wrapped, { tags: parsed });
}

function tagsOf<T>(decoder: Decoder<T>): readonly Tag[] {
  return 'tags' in decoder ? (decoder as TaggedDecoder<T>).tags : [];
}

export function hasTags<T>(decoder: Decoder<T>): boolean {
  return tagsOf(decoder).length > 0;
}

function compare(a: bigint | number, b: bigint | number): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && Number.isInteger(b)) return compare(a, BigInt(b));
  if (typeof b === 'bigint' && Number.isInteger(a)) return compare(BigInt(a), b);
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function isNumeric(value: unknown): value is bigint | number {
  return typeof value === 'bigint' || typeof value === 'number';
}

function oneOfProblem(values: readonly string[], value: unknown): string | undefined {
  return typeof value === 'string' && !values.includes(value)
    ? `must be one of ${values.join(', ')}`
    : undefined;
}

function numericProblem(
  tag: Exclude<Tag, { rule: 'oneof' }>,
  value: unknown,
  sibling: (field: string) => unknown,
): string | undefined {
  if (!isNumeric(value)) return undefined;
  if ('field' in tag) {
    const relation = tag.rule === 'gtfield' ? 'greater' : 'less';
    const other = sibling(tag.field);
    if (!isNumeric(other)) return `must be ${relation} than ${tag.field}, which must then be set too`;
    const order = compare(value, other);
    const holds = relation === 'greater' ? order > 0 : order < 0;
    return holds ? undefined : `must be ${relation} than ${tag.field} (${String(other)})`;
  }
  const order = compare(value, tag.bound);
  const bound = String(tag.bound);
  switch (tag.rule) {
    case 'min':
      return order < 0 ? `must be at least ${bound}` : undefined;
    case 'max':
      return order > 0 ? `must be at most ${bound}` : undefined;
    case 'gt':
      return order <= 0 ? `must be greater than ${bound}` : undefined;
    case 'lt':
      return order >= 0 ? `must be less than ${bound}` : undefined;
  }
}

/** Why `value` breaks its tags (the first failing rule), or undefined. */
function tagProblem(
  tags: readonly Tag[],
  value: unknown,
  sibling: (field: string) => unknown,
): string | undefined {
  if (value === undefined || value === '') return undefined;
  for (const tag of tags) {
    const problem =
      tag.rule === 'oneof' ? oneOfProblem(tag.values, value) : numericProblem(tag, value, sibling);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Reports what `value`, decoded by `decoder`, breaks of its tags; `sibling` reads the struct's other fields. */
export function checkTags<T>(
  decoder: Decoder<T>,
  value: T | undefined,
  path: FieldPath,
  out: Decoding,
  sibling: (field: string) => unknown = () => undefined,
): void {
  const problem = tagProblem(tagsOf(decoder), value, sibling);
  if (problem === undefined) return;
  const bad =
    typeof value === 'bigint' || typeof value === 'number' || typeof value === 'string' ? value : '';
  report(out.tagErrors, () => invalid(path, bad, problem));
}
