import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goQuote } from '../../../../webhook/util/go-quote.js';

describe('goQuote (strconv.Quote)', () => {
  const cases: [string, string][] = [
    ['plain', '"plain"'],
    ['a "quoted" \\ path', '"a \\"quoted\\" \\\\ path"'],
    ['tab\there', '"tab\\there"'],
    ['line\nbreak\r', '"line\\nbreak\\r"'],
    ['\x07\b\f\v', '"\\a\\b\\f\\v"'],
    ['\x00\x1b\x7f', '"\\x00\\x1b\\x7f"'],
    ['café ünïcode 日本', '"café ünïcode 日本"'],
    ['emoji 😀', '"emoji 😀"'],
    ['soft\u00adhyphen', '"soft\\u00adhyphen"'],
    ['nbsp\u00a0', '"nbsp\\u00a0"'],
    ['line\u2028sep', '"line\\u2028sep"'],
    ['private\ue000', '"private\\ue000"'],
    ['astral\u{10ffff}', '"astral\\U0010ffff"'],
    ['lone\ud800', '"lone\ufffd"'],
  ];
  for (const [text, quoted] of cases) {
    it(`quotes ${JSON.stringify(text)}`, () => {
      assert.equal(goQuote(text), quoted);
    });
  }
});
