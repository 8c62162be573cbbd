/**
 * Go's `strconv.Quote`, for the texts that show a value as Go would print it: the field errors of
 * rules ported from Go controllers, and the JSON text parser's syntax errors.
 */
// strconv.Quote keeps what unicode.IsPrint accepts: letters, marks, numbers, punctuation,
// symbols and the ASCII space.
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const GO_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/** Go's `strconv.Quote` (what `%q` prints). */
export function goQuote(text: string): string {
  let out = '"';
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    const escape = GO_ESCAPES[character];
    if (escape !== undefined) out += escape;
    // A lone surrogate cannot come out of Go's JSON decoder, which replaces it with U+FFFD.
    else if (codePoint >= 0xd800 && codePoint <= 0xdfff) out += '\ufffd';
    else if (GO_PRINTABLE.test(character)) out += character;
    else if (codePoint < 0x20 || codePoint === 0x7f) out += `\\x${codePoint.toString(16).padStart(2, '0')}`;
    else if (codePoint < 0x10000) out += `\\u${codePoint.toString(16).padStart(4, '0')}`;
    else out += `\\U${codePoint.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}
