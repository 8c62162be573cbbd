/**
 * Whether a pattern compiles as Go's `regexp.Compile` (RE2 syntax, Perl flags), and if not, Go's
 * error text (`error parsing regexp: missing closing ): `(a``): a port of the error paths of
 * Go 1.26's regexp/syntax parser. It builds only as much of the parse tree as those errors look
 * at (the operand stack, and repeat counts for Go's limit of 1000 nested repetitions).
 */
import {
  GO_UNICODE_CATEGORIES,
  GO_UNICODE_CATEGORY_ALIASES,
  GO_UNICODE_SCRIPTS,
} from './go-unicode-names.js';

class GoRegexpError extends Error {
  constructor(code: string, expr: string) {
    super(`error parsing regexp: ${code}: \`${expr}\``);
  }
}

const MAX_REPEAT = 1000;
const MAX_RUNE = 0x10ffff;
const PERL_GROUPS = new Set(['\\d', '\\D', '\\s', '\\S', '\\w', '\\W']);
const POSIX_GROUPS = new Set(
  [
    'alnum',
    'alpha',
    'ascii',
    'blank',
    'cntrl',
    'digit',
    'graph',
    'lower',
    'print',
    'punct',
    'space',
    'upper',
    'word',
    'xdigit',
  ].flatMap((name) => [`[:${name}:]`, `[:^${name}:]`]),
);

/** A parse-tree node, reduced to what the repeat-count check reads. */
interface Node {
  repeat?: { min: number; max: number };
  subs: Node[];
}
/** The parser's stack: operands, and the markers `(` and `|` (the alternatives so far). */
type Entry =
  { marker: 'paren' } | { marker: 'bar'; alternatives: Node[] } | { marker?: undefined; node: Node };

const leaf = (): Node => ({ subs: [] });
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);
const unhex = (c: string): number => (/^[0-9A-Fa-f]$/.test(c) ? parseInt(c, 16) : -1);
const firstRune = (s: string): string => String.fromCodePoint(s.codePointAt(0) ?? 0);

/** Go's repeatIsValid: nested repeat counts, divided down from `n`, never exceed it. */
function repeatIsValid(node: Node, n: number): boolean {
  let budget = n;
  if (node.repeat) {
    let m = node.repeat.max;
    if (m === 0) return true;
    if (m < 0) m = node.repeat.min;
    if (m > budget) return false;
    if (m > 0) budget = Math.trunc(budget / m);
  }
  return node.subs.every((sub) => repeatIsValid(sub, budget));
}

/** Go's canonicalName: a leading capital, the rest lower case, no `_`, `-` or space. */
function canonicalName(name: string): string {
  let out = '';
  let first = true;
  for (const c of name) {
    if (c === '_' || c === '-' || c === ' ') continue;
    if (first) {
      out += c >= 'a' && c <= 'z' ? c.toUpperCase() : c;
      first = false;
    } else out += c >= 'A' && c <= 'Z' ? c.toLowerCase() : c;
  }
  return out;
}

const CANONICAL_ALIASES = new Set([...GO_UNICODE_CATEGORY_ALIASES.keys()].map(canonicalName));

function isUnicodeTable(raw: string): boolean {
  const name = canonicalName(raw);
  if (['Any', 'Assigned', 'Ascii', 'Lc'].includes(name)) return true;
  return GO_UNICODE_CATEGORIES.has(name) || GO_UNICODE_SCRIPTS.has(name) || CANONICAL_ALIASES.has(name);
}

class Parser {
  private readonly stack: Entry[] = [];

  constructor(private readonly whole: string) {}

  private push(node: Node = leaf()): void {
    this.stack.push({ node });
  }

  /** Collapses the operands above the last marker into one (Go's concat; none is an empty match). */
  private concat(): void {
    let i = this.stack.length;
    while (i > 0 && this.stack[i - 1]?.marker === undefined) i -= 1;
    const subs = this.stack.splice(i).flatMap((entry) => (entry.marker === undefined ? [entry.node] : []));
    this.push(subs.length === 1 && subs[0] ? subs[0] : { subs });
  }

  /** After concat: folds the operand on top into a `|` below it (Go's swapVerticalBar, then pop). */
  private closeAlternation(): void {
    const n = this.stack.length;
    const top = this.stack[n - 1];
    const bar = this.stack[n - 2];
    if (bar?.marker === 'bar' && top !== undefined && top.marker === undefined) {
      this.stack.splice(n - 2, 2);
      this.push({ subs: [...bar.alternatives, top.node] });
    }
  }

  verticalBar(): void {
    this.concat();
    const n = this.stack.length;
    const top = this.stack[n - 1];
    const below = this.stack[n - 2];
    if (top === undefined || top.marker !== undefined) return;
    this.stack.pop();
    if (below?.marker === 'bar') below.alternatives.push(top.node);
    else this.stack.push({ marker: 'bar', alternatives: [top.node] });
  }

  rightParen(): void {
    this.concat();
    this.closeAlternation();
    const n = this.stack.length;
    const inner = this.stack[n - 1];
    if (n < 2 || this.stack[n - 2]?.marker !== 'paren' || inner === undefined || inner.marker !== undefined) {
      throw new GoRegexpError('unexpected )', this.whole);
    }
    this.stack.splice(n - 2, 2);
    this.push({ subs: [inner.node] });
  }

  leftParen(): void {
    this.stack.push({ marker: 'paren' });
  }

  operand(): void {
    this.push();
  }

  /** A repetition of the operand on top; `before` starts at the operator, `after` follows it. */
  repeat(
    min: number,
    max: number,
    before: string,
    after: string,
    lastRepeat: string,
    counted: boolean,
  ): string {
    let rest = after;
    if (rest.startsWith('?')) rest = rest.slice(1);
    if (lastRepeat !== '') {
      throw new GoRegexpError(
        'invalid nested repetition operator',
        lastRepeat.slice(0, lastRepeat.length - rest.length),
      );
    }
    const top = this.stack[this.stack.length - 1];
    if (top === undefined || top.marker !== undefined) {
      throw new GoRegexpError(
        'missing argument to repetition operator',
        before.slice(0, before.length - rest.length),
      );
    }
    const node: Node = { subs: [top.node], ...(counted ? { repeat: { min, max } } : {}) };
    this.stack[this.stack.length - 1] = { node };
    if (counted && (min >= 2 || max >= 2) && !repeatIsValid(node, MAX_REPEAT)) {
      throw new GoRegexpError('invalid repeat count', before.slice(0, before.length - rest.length));
    }
    return rest;
  }

  finish(): void {
    this.concat();
    this.closeAlternation();
    if (this.stack.length !== 1) throw new GoRegexpError('missing closing )', this.whole);
  }
}

/** Go's parseInt for repeat counts: digits without a leading zero. */
function parseCount(s: string): { value: number; rest: string } | undefined {
  if (!isDigit(s[0])) return undefined;
  if (s.length >= 2 && s[0] === '0' && isDigit(s[1])) return undefined;
  let i = 0;
  while (isDigit(s[i])) i += 1;
  const digits = s.slice(0, i);
  // Go stops at 1e8 with -1, so ten digits or more are "too big".
  return { value: digits.length >= 10 ? -1 : Number(digits), rest: s.slice(i) };
}

/** Go's parseRepeat: {n}, {n,} or {n,m}; undefined when `{` is a literal. */
function parseRepeat(s: string): { min: number; max: number; rest: string } | undefined {
  const first = parseCount(s.slice(1));
  if (!first || first.rest === '') return undefined;
  let min = first.value;
  let max: number;
  let rest = first.rest;
  if (rest[0] !== ',') max = min;
  else {
    rest = rest.slice(1);
    if (rest === '') return undefined;
    if (rest[0] === '}') max = -1;
    else {
      const second = parseCount(rest);
      if (!second) return undefined;
      max = second.value;
      rest = second.rest;
      if (max < 0) min = -1;
    }
  }
  if (rest[0] !== '}') return undefined;
  return { min, max, rest: rest.slice(1) };
}

/** Go's parseEscape: the rune an escape stands for, or its error. */
function parseEscape(s: string): { rune: number; rest: string } {
  let t = s.slice(1);
  if (t === '') throw new GoRegexpError('trailing backslash at end of expression', '');
  const c = firstRune(t);
  t = t.slice(c.length);
  const invalid = (): never => {
    throw new GoRegexpError('invalid escape sequence', s.slice(0, s.length - t.length));
  };
  if (c >= '1' && c <= '7' && !(t !== '' && t[0] !== undefined && t[0] >= '0' && t[0] <= '7')) invalid();
  if (c >= '0' && c <= '7') {
    let rune = Number(c);
    for (let i = 1; i < 3 && t !== '' && t[0] !== undefined && t[0] >= '0' && t[0] <= '7'; i += 1) {
      rune = rune * 8 + Number(t[0]);
      t = t.slice(1);
    }
    return { rune, rest: t };
  }
  if (c === 'x') {
    if (t === '') invalid();
    const next = firstRune(t);
    t = t.slice(next.length);
    if (next === '{') {
      let digits = 0;
      let rune = 0;
      for (;;) {
        if (t === '') invalid();
        const d = firstRune(t);
        t = t.slice(d.length);
        if (d === '}') break;
        const v = unhex(d);
        if (v < 0) invalid();
        rune = rune * 16 + v;
        if (rune > MAX_RUNE) invalid();
        digits += 1;
      }
      if (digits === 0) invalid();
      return { rune, rest: t };
    }
    // Go reads a second rune even at the end of the text (as U+FFFD's error-free zero rune).
    const second = t === '' ? '' : firstRune(t);
    t = t.slice(second.length);
    const x = unhex(next);
    const y = second === '' ? -1 : unhex(second);
    if (x < 0 || y < 0) invalid();
    return { rune: x * 16 + y, rest: t };
  }
  const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
  const known = simple[c];
  if (known !== undefined) return { rune: known, rest: t };
  const code = c.codePointAt(0) ?? 0;
  if (code < 0x80 && !isAlnum(c)) return { rune: code, rest: t };
  return invalid();
}

/** Go's parseUnicodeClass: the rest after `\p…`, or undefined when `s` does not start one. */
function parseUnicodeClass(s: string): string | undefined {
  if (s.length < 2 || s[0] !== '\\' || (s[1] !== 'p' && s[1] !== 'P')) return undefined;
  let t = s.slice(2);
  // At the end of the text Go reads no rune and looks up the empty name, which fails.
  if (t === '') throw new GoRegexpError('invalid character class range', s.slice(0, 2));
  const c = firstRune(t);
  t = t.slice(c.length);
  let seq: string;
  let name: string;
  if (c !== '{') {
    seq = s.slice(0, s.length - t.length);
    name = seq.slice(2);
  } else {
    const end = s.indexOf('}');
    if (end < 0) throw new GoRegexpError('invalid character class range', s);
    seq = s.slice(0, end + 1);
    t = s.slice(end + 1);
    name = s.slice(3, end);
  }
  if (name.startsWith('^')) name = name.slice(1);
  if (!isUnicodeTable(name)) throw new GoRegexpError('invalid character class range', seq);
  return t;
}

/** Go's parseClass: the rest after the class `[…]` that `s` starts with. */
function parseClass(s: string): string {
  let t = s.slice(1);
  if (t.startsWith('^')) t = t.slice(1);
  let first = true;
  const classChar = (text: string): { rune: number; rest: string } => {
    if (text === '') throw new GoRegexpError('missing closing ]', s);
    if (text[0] === '\\') return parseEscape(text);
    const c = firstRune(text);
    return { rune: c.codePointAt(0) ?? 0, rest: text.slice(c.length) };
  };
  while (t === '' || t[0] !== ']' || first) {
    first = false;
    if (t.length > 2 && t[0] === '[' && t[1] === ':') {
      const end = t.indexOf(':]', 2);
      if (end >= 0) {
        const name = t.slice(0, end + 2);
        if (!POSIX_GROUPS.has(name)) throw new GoRegexpError('invalid character class range', name);
        t = t.slice(end + 2);
        continue;
      }
    }
    const afterUnicode = parseUnicodeClass(t);
    if (afterUnicode !== undefined) {
      t = afterUnicode;
      continue;
    }
    if (PERL_GROUPS.has(t.slice(0, 2))) {
      t = t.slice(2);
      continue;
    }
    const range = t;
    const lo = classChar(t);
    t = lo.rest;
    if (t.length >= 2 && t[0] === '-' && t[1] !== ']') {
      const hi = classChar(t.slice(1));
      t = hi.rest;
      if (hi.rune < lo.rune) {
        throw new GoRegexpError('invalid character class range', range.slice(0, range.length - t.length));
      }
    }
  }
  return t.slice(1);
}

/** Go's regexp.Compile(pattern)'s parse error, or undefined when it compiles. */
export function goRegexpProblem(pattern: string): string | undefined {
  try {
    parse(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof GoRegexpError) return error.message;
    throw error;
  }
}

function parse(s: string): void {
  const parser = new Parser(s);
  let t = s;
  let lastRepeat = '';
  while (t !== '') {
    let repeat = '';
    const c = t[0];
    if (c === '(') {
      if (t.length >= 2 && t[1] === '?') t = parsePerlFlags(t, parser);
      else {
        parser.leftParen();
        t = t.slice(1);
      }
    } else if (c === '|') {
      parser.verticalBar();
      t = t.slice(1);
    } else if (c === ')') {
      parser.rightParen();
      t = t.slice(1);
    } else if (c === '^' || c === '$' || c === '.') {
      parser.operand();
      t = t.slice(1);
    } else if (c === '[') {
      t = parseClass(t);
      parser.operand();
    } else if (c === '*' || c === '+' || c === '?') {
      const before = t;
      t = parser.repeat(0, 0, before, t.slice(1), lastRepeat, false);
      repeat = before;
    } else if (c === '{') {
      const before = t;
      const parsed = parseRepeat(t);
      if (!parsed) {
        parser.operand();
        t = t.slice(1);
      } else {
        const { min, max, rest } = parsed;
        if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
          throw new GoRegexpError('invalid repeat count', before.slice(0, before.length - rest.length));
        }
        t = parser.repeat(min, max, before, rest, lastRepeat, true);
        repeat = before;
      }
    } else if (c === '\\') {
      t = parseBackslash(t, parser);
    } else {
      t = t.slice(firstRune(t).length);
      parser.operand();
    }
    lastRepeat = repeat;
  }
  parser.finish();
}

function parseBackslash(t: string, parser: Parser): string {
  const next = t[1];
  if (next === 'A' || next === 'b' || next === 'B' || next === 'z') {
    parser.operand();
    return t.slice(2);
  }
  if (next === 'C') throw new GoRegexpError('invalid escape sequence', t.slice(0, 2));
  if (next === 'Q') {
    const body = t.slice(2);
    const end = body.indexOf('\\E');
    const literal = end < 0 ? body : body.slice(0, end);
    for (const _ of literal) parser.operand();
    return end < 0 ? '' : body.slice(end + 2);
  }
  const afterUnicode = parseUnicodeClass(t);
  if (afterUnicode !== undefined) {
    parser.operand();
    return afterUnicode;
  }
  if (PERL_GROUPS.has(t.slice(0, 2))) {
    parser.operand();
    return t.slice(2);
  }
  const { rest } = parseEscape(t);
  parser.operand();
  return rest;
}

/** Go's parsePerlFlags: named captures, flag groups `(?i)` and non-capturing groups `(?i:`. */
function parsePerlFlags(s: string, parser: Parser): string {
  const startsWithP = s.length > 4 && s[2] === 'P' && s[3] === '<';
  const startsWithName = s.length > 3 && s[2] === '<';
  if (startsWithP || startsWithName) {
    const end = s.indexOf('>');
    if (end < 0) throw new GoRegexpError('invalid named capture', s);
    const capture = s.slice(0, end + 1);
    const name = s.slice(startsWithName ? 3 : 4, end);
    if (!/^[A-Za-z0-9_]+$/.test(name)) throw new GoRegexpError('invalid named capture', capture);
    parser.leftParen();
    return s.slice(end + 1);
  }
  let t = s.slice(2);
  let negated = false;
  let sawFlag = false;
  while (t !== '') {
    const c = firstRune(t);
    t = t.slice(c.length);
    if ('imsU'.includes(c)) {
      sawFlag = true;
      continue;
    }
    if (c === '-') {
      if (negated) break;
      negated = true;
      sawFlag = false;
      continue;
    }
    if (c === ':' || c === ')') {
      if (negated && !sawFlag) break;
      if (c === ':') parser.leftParen();
      return t;
    }
    break;
  }
  throw new GoRegexpError('invalid or unsupported Perl syntax', s.slice(0, s.length - t.length));
}
