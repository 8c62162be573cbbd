/**
 * The checks Kthena applies to workers wherever it has them (a ModelBooster's backend, the
 * registry Model's backends, a ModelServing role's containers): the image text, and which worker
 * types a backend type allows. Messages are Kthena's.
 */
import { type BadValue, type FieldError, type FieldPath, invalid } from '../shared/field-errors.js';

/** Go's strings.TrimSpace(s) == "": only Unicode white space (unicode.IsSpace). */
const GO_BLANK = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** Kthena's validateImageField: an empty image is fine; a blank one or one with a space is not. */
export function imageErrors(path: FieldPath, image: string | undefined): FieldError[] {
  if (image === undefined || image === '') return [];
  // Only the ASCII space is refused: tabs and newlines inside an image pass.
  if (GO_BLANK.test(image)) {
    return [
      invalid(path, image, 'invalid container image reference: image cannot be empty or whitespace only'),
    ];
  }
  if (image.includes(' ')) {
    return [invalid(path, image, 'invalid container image reference: image cannot contain spaces')];
  }
  return [];
}

const SINGLE_SERVER_BACKENDS = new Set(['vLLM', 'SGLang', 'MindIE']);
const MINDIE_DISAGGREGATED_WORKERS = new Set(['prefill', 'decode', 'controller', 'coordinator']);

/**
 * Kthena's validateBackendWorkerTypes for one backend: vLLM, SGLang and MindIE run exactly one
 * `server` worker; vLLMDisaggregated only prefill and decode workers; MindIEDisaggregated also
 * controller and coordinator ones. `shown` renders a worker type as the release's messages do.
 */
export function workerTypeErrors(
  backendType: string,
  workerTypes: readonly string[],
  workersPath: FieldPath,
  shown: (type: string) => BadValue,
): FieldError[] {
  if (SINGLE_SERVER_BACKENDS.has(backendType)) {
    const [only] = workerTypes;
    if (workerTypes.length !== 1 || only === undefined) {
      return [
        invalid(
          workersPath,
          workerTypes.length,
          `If backend type is '${backendType}', there must be exactly one worker`,
        ),
      ];
    }
    if (only === 'server') return [];
    return [
      invalid(
        workersPath.index(0).child('type'),
        shown(only),
        `If backend type is '${backendType}', the worker type must be 'server'`,
      ),
    ];
  }
  const errors: FieldError[] = [];
  workerTypes.forEach((workerType, j) => {
    if (backendType === 'vLLMDisaggregated' && workerType !== 'prefill' && workerType !== 'decode') {
      errors.push(
        invalid(
          workersPath.index(j).child('type'),
          shown(workerType),
          "If backend type is 'vLLMDisaggregated', all workers must be type 'prefill' or 'decode'",
        ),
      );
    } else if (backendType === 'MindIEDisaggregated' && !MINDIE_DISAGGREGATED_WORKERS.has(workerType)) {
      errors.push(
        invalid(
          workersPath.index(j).child('type'),
          shown(workerType),
          "If backend type is 'MindIEDisaggregated', all workers must be type 'prefill', 'decode', 'controller', or 'coordinator' (not 'server')",
        ),
      );
    }
  });
  return errors;
}
