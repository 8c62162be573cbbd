import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CI_CORES, COLD_BUDGET_SECONDS, parseTimings, report } from '../../../scripts/ci/timings-report.js';

// As written: each row when it ends, the lanes side by side (the static checks beside the unit suite).
const timings = [
  'reused\tcontrol plane v1.37.2',
  'built\thelm v3.22.0\t70',
  'suite\tintegration (Kubernetes v1.37.2)\t600\t1\t10',
  'suite\tunit\t110\t0\t610',
  'phase\tstatic checks\t50\t0\t612',
  'phase\tnpm test\t720\t1\t8',
  '',
].join('\n');

describe('.ci/run timings table', () => {
  it('lays out phases and suites in the order they began, each with its start and wall seconds, and lists every build', () => {
    const { lines } = report(parseTimings(timings), 800, { 'control plane v1.37.2': 400 });
    const at = (text: string): number => lines.findIndex((line) => line.includes(text));
    assert.ok(at('npm test') < at('integration') && at('integration') < at('unit'));
    assert.ok(at('unit') < at('static checks'));
    assert.match(
      lines[at('integration')] ?? '',
      /^ {4}10 {3}600 {4}integration \(Kubernetes v1\.37\.2\) +exit 1$/,
    );
    assert.match(lines[at('npm test')] ?? '', /^ {5}8 {3}720 {2}npm test +exit 1$/);
    assert.match(lines[at('static checks')] ?? '', /^ {3}612 {4}50 {2}static checks$/);
    assert.match(lines[at('control plane')] ?? '', /reused \(cold 400 CPU s\)/);
    assert.match(lines[at('helm')] ?? '', /70 {2}built \(no cold reference\)/);
  });

  it('adds the cold CPU seconds of every reused build, over the cores, to the estimate, and warns past the budget', () => {
    const under = report(parseTimings(timings), 800, { 'control plane v1.37.2': 400 });
    assert.equal(under.over, false);
    assert.ok(under.lines.some((line) => line.includes(`cold estimate ${800 + 400 / CI_CORES} s`)));
    const total = COLD_BUDGET_SECONDS - 400 / CI_CORES + 1;
    const over = report(parseTimings(timings), total, { 'control plane v1.37.2': 400 });
    assert.equal(over.over, true);
    assert.ok(over.lines.some((line) => line.startsWith('WARNING: the cold estimate passes 45 minutes')));
  });

  it('names a reused build it has no cold figure for, rather than counting it as free', () => {
    const { lines } = report(parseTimings('reused\tpromtool v9\n'), 10, {});
    assert.ok(lines.includes('no cold reference for promtool v9: the estimate leaves them out'));
  });
});

describe('.ci/run timings table, the cold estimate against two runs of one commit', () => {
  // On this machine shape: cold at 79dd8b5 (empty GOCACHE and GOMODCACHE) passed in 2,379 s, warm at
  // d7870bf (the same code, the cold figures taken into the file; every build served by Go's cache)
  // in 1,210 s.
  const coldCpu: Record<string, number> = JSON.parse(
    readFileSync(new URL('../../../scripts/ci/cold-build-cpu-seconds.json', import.meta.url), 'utf8'),
  ) as Record<string, number>;
  const warmCpu: Record<string, number> = {
    'control plane v1.37.2': 17,
    'helm v3.22.0': 3,
    'promtool v0.316.0': 4,
    'node v1.37.2 (kubelet, kube-scheduler, kube-proxy)': 13,
    'node runtime (containerd v2.4.2, CNI plugins v1.10.0, pause)': 6,
    'control plane v1.30.14': 16,
    'koord-manager v1.8.0': 4,
    'kthena-controller-manager v1.0.0': 3,
    'Koordinator v1.8.0 oracle': 2,
    'Kthena v1.0.0 oracle': 2,
    'Koordinator v1.7.0 oracle': 3,
  };
  const built = (cpu: Record<string, number>): string =>
    Object.entries(cpu)
      .map(([name, seconds]) => `built\t${name}\t${seconds}\t${seconds}`)
      .join('\n');
  const estimate = (lines: string[]): number =>
    Number(/cold estimate (\d+) s/.exec(lines.find((line) => line.includes('cold estimate')) ?? '')?.[1]);

  it('estimates the cold run as it was, and from the warm run within 5 % of it, inside the budget', () => {
    assert.deepEqual(Object.keys(warmCpu).sort(), Object.keys(coldCpu).sort(), 'one figure per build');
    assert.equal(estimate(report(parseTimings(built(coldCpu)), 2379, coldCpu).lines), 2379);
    const warm = report(parseTimings(built(warmCpu)), 1210, coldCpu);
    // 2,288 s: 91 s (4 %) under the cold run, whose builds also slowed the suites beside them.
    assert.ok(Math.abs(estimate(warm.lines) - 2379) <= 0.05 * 2379, warm.lines.at(-2));
    assert.equal(warm.over, false);
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
      [' control plane v1.37.2 400 built (700 CPU s; cold 500 CPU s)'],
    );
    assert.equal(lines.filter((line) => line.startsWith('  helm v3')).length, 1);
    // The control plane cost more CPU here than its cold figure: only helm's 80 CPU s are added.
    assert.ok(lines.some((line) => line.includes(`cold estimate ${1000 + 80 / CI_CORES} s`)));
  });
});
