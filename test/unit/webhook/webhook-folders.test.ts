/**
 * Every webhook is a whole folder (webhook/webhooks/<name>/): listed in the index, with a page,
 * an entry point that exists, kinds the registry knows, example reviews of its own
 * path, and inputs for each of its match conditions. Every failure names the file to edit and the
 * command to run. And the code keeps its floors: webhook/, then the operator, with nothing importing
 * a floor above its own (webhook/'s own floors and circles: import-floors.test.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import { kindOfResource } from '../../../webhook/kinds.js';
import { WEBHOOKS } from '../../../webhook/webhooks/index.js';
import { missingExamples, webhookExamples } from '../../harness/webhook-examples.js';
import { conditionInputs, tableConditions } from '../../harness/match-conditions.js';
import { importsUnder } from '../../harness/import-graph.js';

const RUN = 'npx tsx scripts/run-tests.ts unit test/unit/webhook/webhook-folders.test.ts';
const FOLDERS = join(repoRoot, 'webhook', 'webhooks');

describe('the webhook folders', () => {
  it('are each listed once in webhook/webhooks/index.ts, under their own name', () => {
    const folders = readdirSync(FOLDERS, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const listed = WEBHOOKS.map((webhook) => webhook.name);
    for (const folder of folders) {
      assert.ok(
        listed.includes(folder),
        `webhook/webhooks/${folder}/ is not listed: import it in webhook/webhooks/index.ts, then run ${RUN}`,
      );
    }
    assert.equal(new Set(listed).size, listed.length, `a name twice in webhook/webhooks/index.ts`);
    assert.equal(new Set(WEBHOOKS.map((w) => w.path)).size, WEBHOOKS.length, 'a path twice');
  });

  for (const webhook of WEBHOOKS) {
    const folder = `webhook/webhooks/${webhook.name}/index.ts`;
    describe(webhook.name, () => {
      it('has a page under docs/rules/ and an entry point that exists', () => {
        assert.ok(
          existsSync(join(repoRoot, 'docs', 'rules', webhook.docs.page)),
          `${webhook.path} has no page docs/rules/${webhook.docs.page} (docs.page in ${folder}): write it, ` +
            `then run npm run chart:generate`,
        );
        assert.ok(
          existsSync(join(repoRoot, 'webhook', webhook.docs.entryPoint)),
          `docs.entryPoint in ${folder} names webhook/${webhook.docs.entryPoint}, which does not exist: fix it, then run ${RUN}`,
        );
      });

      it('matches only kinds of the registry', () => {
        for (const rule of webhook.resourceRules) {
          for (const group of rule.apiGroups) {
            for (const resource of rule.resources) {
              const plural = resource.split('/')[0] ?? '';
              assert.ok(
                kindOfResource(group, plural),
                `${folder} matches ${plural}.${group || 'core'}, which webhook/kinds.ts does not register: add it there, then run ${RUN}`,
              );
            }
          }
        }
      });

      it('has example reviews of its own path', () => {
        const problem = missingExamples().get(webhook.name);
        assert.equal(problem, undefined, problem);
        const seeds = webhookExamples(webhook.name).seeds();
        assert.ok(
          seeds.length > 0,
          `webhook/webhooks/${webhook.name}/examples.ts gives no seeds: add at least one valid review, then run ${RUN}`,
        );
        for (const seed of seeds) {
          assert.equal(
            seed.path,
            webhook.path,
            `seed "${seed.label}" of webhook/webhooks/${webhook.name}/examples.ts is for another path: use webhook.path`,
          );
        }
      });
    });
  }

  it('give inputs for every match condition the table can produce', () => {
    for (const condition of tableConditions())
      assert.ok(conditionInputs(condition).length > 0, condition.name);
  });
});

describe('two floors: webhook, operator', () => {
  it('the webhook floor imports nothing of the operator, the tests or the scripts (a folder’s examples and tests are the tests’ own)', () => {
    for (const { file, target } of importsUnder(repoRoot, 'webhook')) {
      if (/\/(examples|[^/]+\.test)\.ts$/.test(file) && target.startsWith('test/')) continue;
      assert.ok(
        !/^(operator|test|scripts)\//.test(target),
        `${file} imports ${target}, a floor above webhook/: move what it needs into webhook/, then run ${RUN}`,
      );
    }
  });

  it('the operator imports nothing of the tests or the scripts', () => {
    for (const { file, target } of importsUnder(repoRoot, 'operator')) {
      assert.ok(!/^(test|scripts)\//.test(target), `${file} imports ${target}: the operator ships alone`);
    }
  });
});
