/**
 * Field errors in the style of k8s.io/apimachinery's `field.ErrorList`, rendered byte for byte as
 * its `Error()` does (v0.33), so rules ported from Go controllers keep the messages their users
 * already know: `spec.backends[0].minReplicas: Invalid value: 3: minReplicas cannot be greater
 * than maxReplicas`.
 */
import type { JsonValue } from '../../admission/types.js';
import { MAX_SHOWN_VALUE_CHARS, truncate } from '../../util/bounded-text.js';
import { goQuote } from '../../util/go-quote.js';

type SegmentKind = 'name' | 'subscript' | 'owner' | 'json';

/**
 * A path into an object: `spec.backends[0].workers[1].type`. Immutable. Each path is its last
 * segment and a link to its parent, so a child costs one small object whatever the depth: decoders
 * build a path for every field they visit, and only the few that end up in a message are printed.
 */
export class FieldPath {
  private constructor(
    private readonly parent: FieldPath | undefined,
    private readonly kind: SegmentKind | undefined,
    private readonly text: string,
  ) {}

  private static readonly ROOT = new FieldPath(undefined, undefined, '');

  /** The empty path: the object itself, whose children print without a leading dot. */
  static root(): FieldPath {
    return FieldPath.ROOT;
  }

  /** A path of named fields from the top of the object, like Go's `field.NewPath("spec", "backends")`. */
  static of(name: string, ...more: string[]): FieldPath {
    return FieldPath.ROOT.child(name, ...more);
  }

  child(name: string, ...more: string[]): FieldPath {
    let path = new FieldPath(this, 'name', name);
    for (const each of more) path = new FieldPath(path, 'name', each);
    return path;
  }

  /** A list element: `[3]`. */
  index(index: number): FieldPath {
    return new FieldPath(this, 'subscript', String(index));
  }

  /** A map entry: `[key]` (Go does not quote keys either). */
  key(key: string): FieldPath {
    return new FieldPath(this, 'subscript', key);
  }

  /**
   * The same field of another object than the one under review, which messages name after the
   * field: `spec.max of quota parent`, then `[cpu]`.
   */
  of(owner: string): FieldPath {
    return new FieldPath(this, 'owner', owner);
  }

  /**
   * Into the JSON document this string field holds (a ConfigMap key, an annotation): what follows
   * is a path inside the document, after `: `, as a root path prints (`data[colocation-config]:
   * nodeConfigs[0].name`). Alone, it names the field itself.
   */
  json(): FieldPath {
    return new FieldPath(this, 'json', '');
  }

  /** The segments of `path` from the root down, the root itself excluded. */
  private static segmentsOf(path: FieldPath): FieldPath[] {
    const out: FieldPath[] = [];
    for (let at = path; at.kind !== undefined && at.parent !== undefined; at = at.parent) out.push(at);
    return out.reverse();
  }

  /** The path inside the innermost JSON document (the whole path if there is none). */
  withinJson(): FieldPath {
    const segments = FieldPath.segmentsOf(this);
    const marker = segments.findLastIndex((segment) => segment.kind === 'json');
    if (marker < 0) return this;
    let path = FieldPath.ROOT;
    for (const segment of segments.slice(marker + 1)) path = new FieldPath(path, segment.kind, segment.text);
    return path;
  }

  toString(): string {
    const segments = FieldPath.segmentsOf(this);
    let text = '';
    let documentStart = 0;
    for (const [position, segment] of segments.entries()) {
      if (segment.kind === 'name') text += `${position === documentStart ? '' : '.'}${segment.text}`;
      else if (segment.kind === 'owner') text += ` of ${segment.text}`;
      else if (segment.kind === 'subscript') text += `[${segment.text}]`;
      else if (position < segments.length - 1) {
        text += ': ';
        documentStart = position + 1;
      }
    }
    return text;
  }
}

/**
 * A value Go prints through its `String()` method, unquoted (a `time.Duration`: `35m0s`), where a
 * plain Go string would be quoted (`"35m0s"`).
 */
export class GoStringer {
  constructor(readonly text: string) {}
}

/**
 * What an Invalid error shows as the offending value. A JS string stands for a Go string (quoted);
 * a number or boolean prints plainly; `null`/`undefined` stand for a nil pointer (`"null"`).
 */
export type BadValue = JsonValue | bigint | undefined | GoStringer;

/**
 * `Message` is not apimachinery's: its body is the detail alone, for rules that keep an upstream
 * message that was never a field error (`spec.max: q quota.Spec.Max's value < 0, in dimensions :[cpu]`).
 */
export type FieldErrorType = 'Required' | 'Forbidden' | 'Invalid' | 'Internal' | 'Message';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Forbidden: 'Forbidden',
  Invalid: 'Invalid value',
  Internal: 'Internal error',
  Message: '',
};

/** The value a message shows, cut to MAX_SHOWN_VALUE_CHARS: whoever wrote it chose its length. */
function renderBadValue(value: BadValue): string {
  if (value === null || value === undefined) return goQuote('null');
  if (value instanceof GoStringer) return truncate(value.text, MAX_SHOWN_VALUE_CHARS);
  if (typeof value === 'string') return goQuote(truncate(value, MAX_SHOWN_VALUE_CHARS));
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return truncate(String(value), MAX_SHOWN_VALUE_CHARS);
  // Go would print a struct dump here; JSON is the readable equivalent for a JSON value.
  return truncate(JSON.stringify(value), MAX_SHOWN_VALUE_CHARS);
}

/** One error about one field, rendered as apimachinery's `(*field.Error).Error()`. */
export class FieldError {
  constructor(
    readonly type: FieldErrorType,
    readonly field: FieldPath,
    readonly detail: string,
    readonly badValue?: BadValue,
  ) {}

  /** What follows `<path>: `, as Go's `ErrorBody()`. */
  body(): string {
    if (this.type === 'Message') return this.detail;
    const head =
      this.type === 'Invalid'
        ? `${TYPE_TEXT[this.type]}: ${renderBadValue(this.badValue)}`
        : TYPE_TEXT[this.type];
    return this.detail === '' ? head : `${head}: ${this.detail}`;
  }

  toString(): string {
    const path = this.field.toString();
    // A message about the object as a whole stands alone (apimachinery's types always name a field).
    return path === '' && this.type === 'Message' ? this.body() : `${path}: ${this.body()}`;
  }
}

export const required = (path: FieldPath, detail: string): FieldError =>
  new FieldError('Required', path, detail);

export const forbidden = (path: FieldPath, detail: string): FieldError =>
  new FieldError('Forbidden', path, detail);

export const invalid = (path: FieldPath, value: BadValue, detail: string): FieldError =>
  new FieldError('Invalid', path, detail, value);

/** Go's `field.InternalError(path, err)`: the detail is the error's text. */
export const internal = (path: FieldPath, error: Error | string): FieldError =>
  new FieldError('Internal', path, typeof error === 'string' ? error : error.message);

/**
 * `<path>: <message>`: a message kept as its author wrote it, with the field it is about in front
 * (with `FieldPath.root()`, the message alone).
 */
export const atField = (path: FieldPath, message: string): FieldError =>
  new FieldError('Message', path, message);
