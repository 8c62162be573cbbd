/**
 * webhook/ has no import circle and keeps its floors: the wire format and utilities, then the
 * registry (kinds, names, rule gates, the state rules read), then the rules, then the webhooks'
 * folders, then the table, then the server and the admission chain. A file imports only its own
 * floor or those below, so each can be read, and tested, with nothing above it loaded. The
 * operator has no circle either. Drawn from the sources (test/harness/import-graph.ts), type-only
 * imports included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import {
  circlePath,
  importCircles,
  importGraph,
  importSpecifiers,
  type ImportGraph,
} from '../../harness/import-graph.js';

const RUN = 'npx tsx scripts/run-tests.ts unit test/unit/webhook/import-floors.test.ts';

/** Bottom to top; a file is on the first floor whose pattern it matches. */
const FLOORS: readonly { name: string; files: RegExp }[] = [
  {
    name: 'the wire format, utilities, and the findings and field errors every check reports with',
    files: /^webhook\/(admission|util|rules\/shared)\//,
  },
  {
    name: 'the registry: kinds, names, rule gates, the state rules read, the words of reach and enforcement',
    files:
      /^webhook\/((kinds|names|rule-gates|state)\.ts|narrowing\/(reach|cel-text)\.ts|enforcement\/enforcement\.ts)$/,
  },
  { name: 'the rules', files: /^webhook\/rules\// },
  {
    name: "the webhooks' folders and the gates they declare",
    files: /^webhook\/(webhooks\/|feature-gates\.ts$)/,
  },
  { name: 'the table and its narrowing', files: /^webhook\/(table\.ts|narrowing\/narrow-webhooks\.ts)$/ },
  {
    name: 'the server, enforcement, metrics and the admission chain',
    files: /^webhook\/(server|enforcement|metrics|chain)\//,
  },
];

// A folder's examples and tests belong to the tests: they may read the table above them.
const TEST_FILE = /\/(examples|[^/]+\.test)\.ts$/;

function floorOf(file: string): number {
  return FLOORS.findIndex((floor) => floor.files.test(file));
}

function assertNoCircle(graph: ImportGraph, dir: string): void {
  const [circle] = importCircles(graph);
  assert.equal(
    circle,
    undefined,
    circle &&
      `${dir}/ has an import circle of ${circle.length} files: ${circlePath(graph, circle)}; ` +
        `move what the lower file takes from the higher one below both, then run ${RUN}`,
  );
}

describe('import graph helper', () => {
  it('reads type-only, multi-line, re-export, bare and dynamic imports, not comments', () => {
    const source = [
      "import type {\n  A,\n  B,\n} from './a.js';",
      "export * from './b.js';",
      "export { c } from '../c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      "// import { f } from './f.js';",
      " * import g from './g.js'",
    ].join('\n');
    assert.deepEqual(importSpecifiers(source), ['./a.js', './b.js', '../c.js', './d.js', './e.js']);
  });

  it('finds each circle, a file importing itself included, and the way round it', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['d']],
      ['e', ['a']],
    ]);
    assert.deepEqual(importCircles(graph), [['a', 'b', 'c'], ['d']]);
    assert.equal(circlePath(graph, ['a', 'b', 'c']), 'a -> b -> c -> a');
    assert.equal(circlePath(graph, ['d']), 'd -> d');
  });
});

describe('import floors', () => {
  const webhook = importGraph(repoRoot, 'webhook');

  it('draws webhook/ from its sources', () => {
    // A parser that found nothing would pass every check below.
    assert.ok(webhook.get('webhook/table.ts')?.includes('webhook/webhooks/index.ts'));
    assert.ok(webhook.get('webhook/state.ts')?.includes('webhook/admission/types.ts'), 'a type-only import');
  });

  it('webhook/ has no import circle', () => {
    assertNoCircle(webhook, 'webhook');
  });

  it('operator/ has no import circle', () => {
    assertNoCircle(importGraph(repoRoot, 'operator'), 'operator');
  });

  it('every file of webhook/ is on a floor and imports nothing of a floor above', () => {
    for (const [file, targets] of webhook) {
      if (TEST_FILE.test(file)) continue;
      const floor = floorOf(file);
      assert.ok(
        floor >= 0,
        `${file} is on no floor: add it to FLOORS in test/unit/webhook/import-floors.test.ts`,
      );
      for (const target of targets) {
        const above = floorOf(target);
        assert.ok(
          above <= floor,
          `${file} (${FLOORS[floor]?.name}) imports ${target} (${FLOORS[above]?.name}), a floor above: ` +
            `move what it takes down, or pass it in from above, then run ${RUN}`,
        );
      }
    }
  });
});
