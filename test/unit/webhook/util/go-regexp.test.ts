import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goRegexpProblem } from '../../../../webhook/util/go-regexp.js';

// What Go 1.26's regexp.Compile answers for each (run with Go; the differential suite compares many more).
const CASES: readonly [string, string | undefined][] = [
  ['^premium-[a-z]+$', undefined],
  ['(?P<n>a)|(?<m>b)|(?i:c)', undefined],
  ['\\p{Greek}\\p{greek}\\pL\\p{Lu}\\p{LC}\\p{Any}\\p{ascii}\\p{Cased_Letter}', undefined],
  ['\\Q*\\E+', undefined],
  ['a{,5}', undefined],
  ['[', 'error parsing regexp: missing closing ]: `[`'],
  ['(a', 'error parsing regexp: missing closing ): `(a`'],
  ['a)', 'error parsing regexp: unexpected ): `a)`'],
  ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
  ['*a', 'error parsing regexp: missing argument to repetition operator: `*`'],
  ['x{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
  ['((a{500}){3})', 'error parsing regexp: invalid repeat count: `{3}`'],
  ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
  ['[[:foo:]]', 'error parsing regexp: invalid character class range: `[:foo:]`'],
  ['\\8', 'error parsing regexp: invalid escape sequence: `\\8`'],
  ['\\x{110000}', 'error parsing regexp: invalid escape sequence: `\\x{110000`'],
  ['(?<x', 'error parsing regexp: invalid named capture: `(?<x`'],
  ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
  // Go 1.26 canonicalizes the name (drops `_`) before looking it up among names that keep it.
  ['\\p{Old_Italic}', 'error parsing regexp: invalid character class range: `\\p{Old_Italic}`'],
  ['a\\', 'error parsing regexp: trailing backslash at end of expression: ``'],
];

describe('goRegexpProblem (Go regexp/syntax parse errors)', () => {
  for (const [pattern, expected] of CASES) {
    it(`${JSON.stringify(pattern)}: ${expected ?? 'compiles'}`, () => {
      assert.equal(goRegexpProblem(pattern), expected);
    });
  }
});
