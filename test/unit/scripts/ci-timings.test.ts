import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COLD_BUDGET_SECONDS, parseTimings, report } from '../../../scripts/ci/timings-report.js';

const timings = [
  'reused\tcontrol plane v1.37.2',
  'built\thelm v3.22.0\t70',
  'phase\tstatic checks\t50\t0',
  'suite\tunit\t110\t0',
  'suite\tintegration (Kubernetes v1.37.2)\t600\t1',
  'phase\tnpm test\t720\t1',
  '',
].join('\n');

describe('.ci/run timings table', () => {
  it('puts each suite under the phase it ran in, and lists every build', () => {
    const { lines } = report(parseTimings(timings), 800, { 'control plane v1.37.2': 400 });
    const at = (text: string): number => lines.findIndex((line) => line.includes(text));
    assert.ok(at('static checks') < at('npm test') && at('npm test') < at('  unit'));
    assert.match(lines[at('integration')] ?? '', /600 {2}exit 1$/);
    assert.match(lines[at('npm test')] ?? '', /720 {2}exit 1$/);
    assert.match(lines[at('control plane')] ?? '', /reused \(cold 400\)/);
    assert.match(lines[at('helm')] ?? '', /70 {2}built \(no cold reference\)/);
  });

  it('adds the cold seconds of every reused build to the estimate, and warns past the budget', () => {
    const under = report(parseTimings(timings), 800, { 'control plane v1.37.2': 400 });
    assert.equal(under.over, false);
    assert.ok(under.lines.some((line) => line.includes('cold estimate at most 1200 s')));
    const total = COLD_BUDGET_SECONDS - 399;
    const over = report(parseTimings(timings), total, { 'control plane v1.37.2': 400 });
    assert.equal(over.over, true);
    assert.ok(over.lines.some((line) => line.startsWith('WARNING: the cold estimate passes 45 minutes')));
  });

  it('names a reused build it has no cold figure for, rather than counting it as free', () => {
    const { lines } = report(parseTimings('reused\tpromtool v9\n'), 10, {});
    assert.ok(lines.includes('no cold reference for promtool v9: the estimate leaves them out'));
  });
});

describe('.ci/run timings table, a build looked for by many processes', () => {
  it('counts a build once: built if any process built it, else reused once', () => {
    const rows = parseTimings(
      [
        'built\tcontrol plane v1.37.2\t400\t700',
        'reused\tcontrol plane v1.37.2',
        'reused\thelm v3',
        'reused\thelm v3',
      ].join('\n'),
    );
    const { lines } = report(rows, 1000, { 'control plane v1.37.2': 500, 'helm v3': 80 });
    assert.deepEqual(
      lines.filter((line) => line.startsWith('  control plane')).map((line) => line.replace(/\s+/g, ' ')),
      [' control plane v1.37.2 400 built (700 CPU s; cold 500)'],
    );
    assert.equal(lines.filter((line) => line.startsWith('  helm v3')).length, 1);
    assert.ok(lines.some((line) => line.includes('cold estimate at most 1180 s')));
  });
});
