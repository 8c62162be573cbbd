/**
 * A bound on JSON nesting, applied to the raw body before it is parsed. V8's JSON.parse accepts any
 * depth but spends about half a second per megabyte of `[[[[…`, and everything after it (cloning,
 * diffing, rules) recurses: one deep review could hold the event loop for seconds or overflow the
 * stack. Pruning here keeps the envelope readable, so the caller can still answer the review by
 * its uid and say why.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NULL_TEXT = Buffer.from('null');

export interface PrunedJson {
  /** The body with every container deeper than the bound replaced by `null`. */
  body: Buffer;
  /** How many containers were replaced. */
  pruned: number;
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

/**
 * False when the body has at most `maxDepth` opening brackets and braces (strings included), so it
 * cannot nest deeper: true of nearly every real review, found with a few native searches instead
 * of a byte-by-byte scan.
 */
function mayNestDeeperThan(bytes: Buffer, maxDepth: number): boolean {
  let openings = 0;
  for (const opening of [OPEN_BRACE, OPEN_BRACKET]) {
    for (let at = bytes.indexOf(opening); at !== -1; at = bytes.indexOf(opening, at + 1)) {
      openings += 1;
      if (openings > maxDepth) return true;
    }
  }
  return false;
}

/**
 * Replaces each array or object that starts deeper than `maxDepth` (the top-level value is depth
 * 1) with `null`, in one pass: time linear in the body, memory at most one copy of it. Bytes of
 * multi-byte UTF-8 sequences are all >= 0x80, so scanning bytes never mistakes them for syntax.
 * Malformed JSON passes through for JSON.parse to report.
 */
export function pruneDeepJson(bytes: Buffer, maxDepth: number): PrunedJson {
  if (!mayNestDeeperThan(bytes, maxDepth)) return { body: bytes, pruned: 0 };
  const pieces: Buffer[] = [];
  let copiedUpTo = 0;
  let pruned = 0;
  let depth = 0;
  // While inside a container being pruned: the depth at which it started.
  let prunedFrom = -1;
  for (let at = 0; at < bytes.length; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      const close = closingQuote(bytes, at);
      if (close === -1) break;
      at = close;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth && prunedFrom === -1) {
        prunedFrom = depth;
        pieces.push(bytes.subarray(copiedUpTo, at), NULL_TEXT);
        pruned += 1;
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
  return { body: Buffer.concat(pieces), pruned };
}
