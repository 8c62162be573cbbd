/**
 * The differential suite's documented differences (test/differential/expected.ts) against the rule
 * pages that document them, and its classification on answers made up here: a difference a
 * classifier explains is documented, any other is not.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import { classify, type Observed, type Rejudge } from '../../differential/classify.js';
import { compareVerdicts, type Verdict } from '../../differential/compare.js';
import { DOCUMENTED } from '../../differential/expected.js';

const page = (name: string): string => readFileSync(join(repoRoot, 'docs', 'rules', name), 'utf8');

/** A page's section anchors, as GitHub makes them from its headings. */
const headings = (text: string): string[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) =>
      line
        .replace(/^#+\s*/, '')
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replaceAll(' ', '-'),
    );

function observed(path: string, ours: Partial<Verdict>, theirs: Partial<Verdict>): Observed {
  const base: Verdict = { allowed: true, code: 200, message: '', warnings: [], patch: [] };
  const mine = { ...base, ...ours };
  const their = { ...base, ...theirs };
  return {
    path,
    note: 'made up',
    review: { request: { operation: 'CREATE', object: null } },
    world: { objects: [] },
    ours: mine,
    theirs: their,
    ...compareVerdicts(mine, their, undefined, undefined),
  };
}

const noCounterfactuals: Rejudge = () => Promise.reject(new Error('no counterfactual expected'));
/** Both sides answer again what they answered. */
const sameAgain: Rejudge = (previous) => Promise.resolve(previous);

describe('documented differences', () => {
  it('are each named, with their id, on every rule page they cite', () => {
    const ids = new Set<string>();
    for (const difference of DOCUMENTED) {
      assert.ok(!ids.has(difference.id), `${difference.id} is defined twice`);
      ids.add(difference.id);
      for (const cited of difference.page.split(', ')) {
        const [file = '', anchor] = cited.split('#');
        const text = page(file);
        assert.ok(text.includes(`\`${difference.id}\``), `${file} does not document ${difference.id}`);
        if (anchor) assert.ok(headings(text).includes(anchor), `${file} has no section #${anchor}`);
      }
    }
  });

  it('explain a refusal that differs only by our field path in front', async () => {
    const found = observed(
      '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      { allowed: false, code: 400, message: 'metadata.name: AddQuota quota already exist:a' },
      { allowed: false, code: 400, message: 'AddQuota quota already exist:a' },
    );
    assert.deepEqual(await classify(found, DOCUMENTED, noCounterfactuals), ['field-path-in-front']);
  });

  it('leave a difference no classifier explains undocumented', async () => {
    const found = observed(
      '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      { allowed: true },
      { allowed: false, code: 400, message: 'delete quota failed, quota a has 1 child quotas' },
    );
    assert.equal(await classify(found, DOCUMENTED, sameAgain), undefined);
    const reworded = observed(
      '/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota',
      { allowed: false, code: 400, message: 'metadata.name: quota a is already there' },
      { allowed: false, code: 400, message: 'AddQuota quota already exist:a' },
    );
    assert.equal(await classify(reworded, DOCUMENTED, sameAgain), undefined);
  });

  it('judge again under a classifier’s counterfactual, and document only an answer that then agrees', async () => {
    const coloc = observed(
      '/validate-pod',
      {
        allowed: false,
        code: 400,
        message:
          'Pod: Forbidden: koordinator.sh/qosClass=BE and priorityClass= cannot be used in combination',
      },
      { allowed: true },
    );
    const agreeing: Rejudge = (_observed, change) => {
      assert.equal(change.ourEnforcement, 'validate-pod/colocation=dryrun');
      return Promise.resolve(observed('/validate-pod', { allowed: true }, { allowed: true }));
    };
    assert.deepEqual(await classify(coloc, DOCUMENTED, agreeing), ['colocation-step-enforced']);
    const stillApart: Rejudge = () =>
      Promise.resolve(
        observed(
          '/validate-pod',
          { allowed: false, code: 400, message: 'exceeded quota' },
          { allowed: true },
        ),
      );
    assert.equal(await classify(coloc, DOCUMENTED, stillApart), undefined);
  });
});
