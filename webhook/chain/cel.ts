/**
 * Webhook match conditions in CEL, evaluated as the API server does, by @marcbachmann/cel-js:
 * `object`, `oldObject` and `request` as dynamic variables; selecting an absent field is an error,
 * and `&&`, `||` and the `exists` macros absorb errors as CEL's commutative logic does
 * (`true || error` is true), so a condition errs exactly where the API server's would.
 *
 * An expression the library cannot parse or type-check (a Kubernetes-only function such as
 * `quantity()`, say) does not compile: the caller reports it instead of guessing.
 */
import {
  EvaluationError,
  Environment,
  ParseError,
  type TypeError as CelTypeError,
} from '@marcbachmann/cel-js';

export type CelValue = null | boolean | number | string | CelValue[] | { [key: string]: CelValue };

/** An evaluation error: a value, as in CEL, until the whole expression yields it. */
export class CelError {
  constructor(readonly message: string) {}
}

type Result = CelValue | CelError;

class CelSyntaxError extends Error {
  override name = 'CelSyntaxError';
}

const environment = new Environment()
  .registerVariable('object', 'dyn')
  .registerVariable('oldObject', 'dyn')
  .registerVariable('request', 'dyn');

/** The library's message without the source excerpt it appends, in lower case as the API server's. */
const summary = (error: ParseError | EvaluationError | CelTypeError): string =>
  error.summary.charAt(0).toLowerCase() + error.summary.slice(1);

/** A value as bound: JSON, but a map holding the key `constructor` is a Map (see bindable). */
type Bound =
  null | boolean | number | string | Bound[] | { [key: string]: Bound } | ReadonlyMap<string, Bound>;

/**
 * `value` with every null field left out. The API server binds an object decoded into its kind's
 * Go type, where a field written as null is an absent one (a manifest's `labels:` with nothing
 * after it); bound as null, has() would be true for it, as CEL's has() is for any present key, and
 * a condition would err where the API server's does not. Subtrees without nulls are shared (no
 * cache by object: a WeakMap entry for each review's fresh objects cost more than the walk).
 *
 * The library tells a map from other objects by its `constructor`: a map with a key of that name
 * (a resource or a label a user named so) would be an unsupported type, so it is bound as a Map,
 * which the library reads by key alone.
 */
function bindable(value: CelValue): Bound {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let items: Bound[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index] as CelValue;
      const kept = bindable(item);
      if (kept === item) continue;
      items ??= value.slice();
      items[index] = kept;
    }
    return items ?? value;
  }
  let copy: { [key: string]: Bound } | undefined;
  for (const key of Object.keys(value)) {
    const field = value[key] as CelValue;
    if (field === null) {
      copy ??= { ...value };
      Reflect.deleteProperty(copy, key);
      continue;
    }
    const kept = bindable(field);
    if (kept === field) continue;
    copy ??= { ...value };
    copy[key] = kept;
  }
  const result = copy ?? value;
  return Object.hasOwn(result, 'constructor') ? new Map(Object.entries(result)) : result;
}

/** What the library returns, as JSON: CEL's integers are bigints there. */
function fromCel(value: unknown): CelValue {
  return typeof value === 'bigint' ? Number(value) : (value as CelValue);
}

/** A parsed expression, ready to evaluate against variables. */
export interface CelProgram {
  evaluate(variables: Readonly<Record<string, CelValue>>): Result;
}

/** Parses and type-checks `source`; throws CelSyntaxError when the library cannot. */
export function compileCel(source: string): CelProgram {
  let program: ReturnType<Environment['parse']>;
  try {
    program = environment.parse(source);
  } catch (error) {
    if (error instanceof ParseError) throw new CelSyntaxError(summary(error), { cause: error });
    throw error;
  }
  const checked = program.check();
  if (!checked.valid && checked.error)
    throw new CelSyntaxError(summary(checked.error), { cause: checked.error });
  return {
    evaluate: (variables) => {
      const bound: Record<string, Bound> = {};
      for (const [name, value] of Object.entries(variables)) bound[name] = bindable(value);
      try {
        return fromCel(program(bound));
      } catch (error) {
        if (error instanceof EvaluationError) return new CelError(summary(error));
        throw error;
      }
    },
  };
}
