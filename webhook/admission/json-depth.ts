/**
 * Bounds on JSON shape, applied to the raw body before it is parsed. V8's JSON.parse accepts any
 * depth but spends about half a second per megabyte of `[[[[…`, and everything after it (cloning,
 * diffing, rules) recurses: one deep review could hold the event loop for seconds or overflow the
 * stack. Likewise a single map of 100,000 keys costs V8 hundreds of milliseconds to build, copy and
 * diff, whatever a rule then does with it. Pruning keeps the envelope readable, so the caller can
 * still answer the review by its uid and say why.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NULL_TEXT = Buffer.from('null');

export interface ShapeLimits {
  /** The deepest a container may start (the top-level value is depth 1). */
  maxDepth: number;
  /** The most members (keys or items) one object or array may have. */
  maxMembers: number;
}

export interface PrunedJson {
  /** The body with every container beyond the limits replaced by `null`. */
  body: Buffer;
  /** How many containers were replaced. */
  pruned: number;
  /** Which limit was met first, when one was. */
  exceeded?: 'depth' | 'members';
}

/** The index of the quote that closes the string whose opening quote is at `open`, or -1. */
function closingQuote(bytes: Buffer, open: number): number {
  let at = bytes.indexOf(QUOTE, open + 1);
  while (at !== -1) {
    let backslashes = 0;
    for (let back = at - 1; bytes[back] === BACKSLASH; back -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return at;
    at = bytes.indexOf(QUOTE, at + 1);
  }
  return -1;
}

/** True when the `values` occur more than `bound` times in `bytes` together, found with native searches. */
function occursMoreThan(bytes: Buffer, values: readonly number[], bound: number): boolean {
  let count = 0;
  for (const value of values) {
    for (let at = bytes.indexOf(value); at !== -1; at = bytes.indexOf(value, at + 1)) {
      count += 1;
      if (count > bound) return true;
    }
  }
  return false;
}

/**
 * False when the body cannot break the limits: at most `maxDepth` opening brackets and braces,
 * and fewer commas than `maxMembers` (those in strings counted too). True of nearly every real
 * review, and found with a few native searches instead of a byte-by-byte scan.
 */
function mayExceed(bytes: Buffer, limits: ShapeLimits): boolean {
  return (
    occursMoreThan(bytes, [OPEN_BRACE, OPEN_BRACKET], limits.maxDepth) ||
    occursMoreThan(bytes, [COMMA], limits.maxMembers - 1)
  );
}

/**
 * Replaces each array or object that starts deeper than `maxDepth`, or that has more than
 * `maxMembers` members, with `null`, in one pass: time linear in the body, memory at most one copy
 * of it. Bytes of multi-byte UTF-8 sequences are all >= 0x80, so scanning bytes never mistakes them
 * for syntax. Malformed JSON passes through for JSON.parse to report.
 */
export function pruneJson(bytes: Buffer, limits: ShapeLimits): PrunedJson {
  if (!mayExceed(bytes, limits)) return { body: bytes, pruned: 0 };
  const pieces: Buffer[] = [];
  let copiedUpTo = 0;
  let pruned = 0;
  let exceeded: PrunedJson['exceeded'];
  let depth = 0;
  // Per open container: where it starts and how many commas it has had (members - 1).
  const starts: number[] = [];
  const commas: number[] = [];
  // While inside a container being pruned: the depth at which it started.
  let prunedFrom = -1;
  const prune = (from: number, at: number, why: NonNullable<PrunedJson['exceeded']>): void => {
    prunedFrom = from;
    pieces.push(bytes.subarray(copiedUpTo, at), NULL_TEXT);
    pruned += 1;
    exceeded ??= why;
  };
  for (let at = 0; at < bytes.length; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      const close = closingQuote(bytes, at);
      if (close === -1) break;
      at = close;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      depth += 1;
      starts[depth] = at;
      commas[depth] = 0;
      if (depth > limits.maxDepth && prunedFrom === -1) prune(depth, at, 'depth');
    } else if (byte === COMMA) {
      const count = (commas[depth] ?? 0) + 1;
      commas[depth] = count;
      // Too many members: cut the container from its opening, dropping what was copied of it.
      if (count >= limits.maxMembers && prunedFrom === -1) {
        const start = starts[depth] ?? at;
        if (start < copiedUpTo) continue;
        prune(depth, start, 'members');
      }
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      if (depth === prunedFrom) {
        prunedFrom = -1;
        copiedUpTo = at + 1;
      }
      depth -= 1;
    }
  }
  if (pruned === 0) return { body: bytes, pruned };
  // An unterminated pruned container: the truncated text fails JSON.parse, as the original would.
  if (prunedFrom === -1) pieces.push(bytes.subarray(copiedUpTo));
  return { body: Buffer.concat(pieces), pruned, ...(exceeded ? { exceeded } : {}) };
}

/** pruneJson with a depth bound only. */
export function pruneDeepJson(bytes: Buffer, maxDepth: number): PrunedJson {
  return pruneJson(bytes, { maxDepth, maxMembers: Number.MAX_SAFE_INTEGER });
}
