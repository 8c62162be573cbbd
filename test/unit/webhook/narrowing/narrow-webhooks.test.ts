/**
 * The shapes narrowing writes: disjoint entries of one path, bounded whatever the state holds,
 * wider (never narrower) when a bound is reached. What they send is proved against the rules by
 * blast-radius.test.ts; here, the bounds and the structure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionRequest, KubeObject } from '../../../../webhook/admission/types.js';
import { matchWebhook } from '../../../../webhook/chain/match-webhook.js';
import { compileCel } from '../../../../webhook/chain/cel.js';
import { NAMESPACE_NAME_LABEL } from '../../../../webhook/names.js';
import {
  NARROWING_LIMITS,
  narrowEntry,
  narrowWebhooks,
  REACH_CONDITION,
} from '../../../../webhook/narrowing/narrow-webhooks.js';
import { celString } from '../../../../webhook/narrowing/cel-text.js';
import type { Reach } from '../../../../webhook/narrowing/reach.js';
import { desiredMutating, desiredValidating } from '../../../../operator/webhooks/desired-configurations.js';
import type { WebhookEntry } from '../../../../webhook/table.js';
import { BOUNDED_SCALE, scaleNamespace, scaleState } from '../../../harness/narrowing-scale.js';
import { defaultWebhooks } from '../../../harness/table-context.js';
import { admissionRequest } from '../../../harness/requests.js';
import { stateSnapshot } from '../../../harness/state.js';

const CA = '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n';
const ENDPOINT = {
  mode: 'service',
  namespace: 'admission-system',
  name: 'admission-operator',
  port: 443,
} as const;

function podCreate(namespace: string, labels: Record<string, string>): AdmissionRequest {
  const object: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace, labels },
    spec: { containers: [{ name: 'main', image: 'app:1', resources: { requests: { cpu: '1' } } }] },
  };
  return admissionRequest({ kind: 'Pod', resource: 'pods', namespace, name: 'p', object });
}

/** How many entries of `path` would be sent `request` in a namespace with `labels`. */
function sentTo(
  entries: readonly WebhookEntry[],
  path: string,
  request: AdmissionRequest,
  labels: Record<string, string>,
): number {
  const context = { namespaceLabels: () => labels, namespaced: true };
  return entries.filter((entry) => entry.path === path && matchWebhook(entry, request, context).call === true)
    .length;
}

/** The most entries of `cells` one operation is sent to (the bound holds per path and operation). */
const perOperation = (cells: readonly WebhookEntry[]): number =>
  Math.max(
    0,
    ...['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].map(
      (operation) =>
        cells.filter((cell) =>
          cell.resourceRules.some((rule) => (rule.operations as string[]).includes(operation)),
        ).length,
    ),
  );

const base = (): WebhookEntry => {
  const entry = defaultWebhooks().find((each) => each.path === '/validate-pod');
  assert.ok(entry);
  return entry;
};

describe('narrowed webhook entries', () => {
  it('stay within their bounds at 10,000 namespaces with a quota each and 1,000 profiles', () => {
    const state = scaleState(BOUNDED_SCALE);
    const entries = narrowWebhooks(defaultWebhooks(), state);
    for (const path of ['/mutate-pod', '/validate-pod']) {
      const cells = entries.filter((entry) => entry.path === path);
      assert.ok(
        cells.length >= 1 && perOperation(cells) <= NARROWING_LIMITS.namespaceGroups + 1,
        `${path}: ${cells.length}`,
      );
      for (const cell of cells) {
        const condition = cell.matchConditions.find((each) => each.name === REACH_CONDITION);
        assert.ok((condition?.expression.length ?? 0) <= NARROWING_LIMITS.conditionChars, cell.name);
        // The chain's CEL library takes it (lists of at most 1,000 items, depth within its limits).
        if (condition) compileCel(condition.expression);
      }
    }
    // Each configuration stays far below what etcd stores in one object (1.5 MiB).
    for (const configuration of [
      desiredMutating(entries, ENDPOINT, CA),
      desiredValidating(entries, ENDPOINT, CA),
    ]) {
      const bytes = Buffer.byteLength(JSON.stringify(configuration));
      assert.ok(bytes < 1024 * 1024, `${configuration.kind}: ${bytes} bytes`);
    }
    // Still narrow: a plain pod of a team no profile selects, in a namespace without a quota, is not sent.
    const plain = { [NAMESPACE_NAME_LABEL]: 'elsewhere', 'example.com/team': 'team-55' };
    assert.equal(sentTo(entries, '/mutate-pod', podCreate('elsewhere', {}), plain), 0);
    assert.equal(sentTo(entries, '/validate-pod', podCreate('elsewhere', {}), plain), 0);
    // And what a rule acts on is sent, once: a quota namespace's pods, a profile's pods.
    const tenant = { [NAMESPACE_NAME_LABEL]: scaleNamespace(7), 'example.com/team': 'team-7' };
    assert.equal(sentTo(entries, '/validate-pod', podCreate(scaleNamespace(7), {}), tenant), 1);
    assert.equal(
      sentTo(entries, '/mutate-pod', podCreate(scaleNamespace(7), { 'example.com/app': 'app-7' }), tenant),
      1,
    );
    // profile-0009 selects every pod of team-9's namespaces.
    const team9 = { [NAMESPACE_NAME_LABEL]: 'x', 'example.com/team': 'team-9' };
    assert.equal(sentTo(entries, '/mutate-pod', podCreate('x', {}), team9), 1);
  });

  it('split the namespaces so that no namespace is in two entries of a path', () => {
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const reach: Reach = {
      anywhere: [{ cel: "has(object.metadata.labels) && 'x' in object.metadata.labels" }],
      within: keys.map((key, index) => ({
        namespaces: {
          selector: {
            requirements: [
              index % 3 === 0
                ? { key, operator: 'In', values: ['1', '2'] }
                : index % 3 === 1
                  ? { key, operator: 'Exists', values: [] }
                  : { key, operator: 'NotIn', values: ['1'] },
            ],
          },
        },
        terms: [
          {
            operations: ['CREATE'],
            labels: { requirements: [{ key: 'app', operator: 'In', values: [key] }] },
          },
        ],
      })),
    };
    const cells = narrowEntry(base(), reach);
    assert.ok(perOperation(cells) <= NARROWING_LIMITS.namespaceGroups + 1, `${cells.length} entries`);
    assert.equal(new Set(cells.map((cell) => cell.name)).size, cells.length, 'names are unique');
    // Every label combination over the keys (each absent, 1, 2 or 3) falls in exactly one entry,
    // on CREATE (the namespace groups' terms) and on UPDATE (an entry of its own, not split).
    const create = podCreate('n', { app: 'a', x: 'y' });
    const update = { ...create, operation: 'UPDATE' as const, oldObject: create.object };
    for (let combination = 0; combination < 4 ** 5; combination++) {
      const labels: Record<string, string> = { [NAMESPACE_NAME_LABEL]: 'n' };
      keys.slice(0, 5).forEach((key, index) => {
        const value = Math.floor(combination / 4 ** index) % 4;
        if (value > 0) labels[key] = String(value);
      });
      assert.equal(sentTo(cells, '/validate-pod', create, labels), 1, JSON.stringify(labels));
      assert.equal(sentTo(cells, '/validate-pod', update, labels), 1, JSON.stringify(labels));
    }
    const updates = cells.filter((cell) =>
      cell.resourceRules.some((rule) => rule.operations.includes('UPDATE')),
    );
    assert.deepEqual(
      updates.map((cell) => [cell.name, cell.resourceRules.flatMap((rule) => rule.operations)]),
      [['validate-pod-update.admission-operator.io', ['UPDATE']]],
    );
  });

  it('give operations whose reach differs entries of their own, with no operation test left', () => {
    const entries = narrowWebhooks(defaultWebhooks(), stateSnapshot({}));
    const shape = (path: string): [string, string[], string[]][] =>
      entries
        .filter((entry) => entry.path === path)
        .map((entry) => [
          entry.name,
          entry.resourceRules.flatMap((rule) => rule.operations),
          entry.matchConditions.map((condition) => condition.name),
        ]);
    // /mutate-pod acts on CREATE only: its UPDATE rule goes, and with it the declared opt-in condition.
    assert.deepEqual(shape('/mutate-pod'), [
      ['mutate-pod.admission-operator.io', ['CREATE'], [REACH_CONDITION]],
    ]);
    assert.deepEqual(shape('/validate-pod'), [
      ['validate-pod.admission-operator.io', ['CREATE'], [REACH_CONDITION]],
      ['validate-pod-update.admission-operator.io', ['UPDATE'], [REACH_CONDITION]],
    ]);
    const create = entries.find((entry) => entry.name === 'validate-pod.admission-operator.io');
    assert.doesNotMatch(create?.matchConditions[0]?.expression ?? '', /request\.operation|oldObject/);
    // The declared condition left out holds on every CREATE, as matchConditionsHoldOn says.
    const declared = defaultWebhooks().find((entry) => entry.path === '/mutate-pod');
    assert.deepEqual(declared?.matchConditionsHoldOn, ['CREATE']);
    for (const condition of declared?.matchConditions ?? []) {
      const { object } = podCreate('n', {});
      assert.equal(
        compileCel(condition.expression).evaluate({
          object,
          oldObject: null,
          request: { operation: 'CREATE' },
        }),
        true,
        condition.name,
      );
    }
  });

  it('test the profiles that select one label in one list, as exactly as one test each', () => {
    const profile = (name: string, selector: Record<string, string>) => ({
      name,
      annotations: {},
      spec: { selector: { matchLabels: selector }, labels: { colocated: 'true' } },
    });
    const colocationProfiles = [
      ...Array.from({ length: 30 }, (_, i) => profile(`app-${i}`, { app: `app-${i}` })),
      profile('two-labels', { app: 'web', tier: 'front' }),
    ];
    const entries = narrowWebhooks(defaultWebhooks(), stateSnapshot({ colocationProfiles }));
    const condition = entries
      .find((entry) => entry.path === '/mutate-pod')
      ?.matchConditions.at(-1)?.expression;
    assert.equal(condition?.match(/object\.metadata\.labels\['app'\] in \[/g)?.length, 2, condition);
    const mutate = (labels: Record<string, string>): number =>
      sentTo(entries, '/mutate-pod', podCreate('n', labels), { [NAMESPACE_NAME_LABEL]: 'n' });
    assert.equal(mutate({ app: 'app-17' }), 1);
    assert.equal(mutate({ app: 'app-30' }), 0);
    assert.equal(mutate({ app: 'web' }), 0);
    assert.equal(mutate({ app: 'web', tier: 'front' }), 1);
  });

  it('leave an entry as it is when its reach holds for every review', () => {
    const entry = base();
    assert.deepEqual(narrowEntry(entry, { anywhere: [{}], within: [] }), [entry]);
    // A namespace list past the bound sends its terms everywhere.
    const names = Array.from({ length: NARROWING_LIMITS.listedNames + 1 }, (_, i) => `ns-${i}`);
    assert.deepEqual(narrowEntry(entry, { anywhere: [], within: [{ namespaces: { names }, terms: [{}] }] }), [
      entry,
    ]);
  });

  it('write no entry for a webhook that can act on nothing', () => {
    assert.deepEqual(narrowEntry(base(), { anywhere: [], within: [] }), []);
  });

  it('list long namespace lists in a selector, short ones in the condition', () => {
    const short = narrowEntry(base(), {
      anywhere: [],
      within: [{ namespaces: { names: ['q1', 'q2'] }, terms: [{}] }],
    });
    assert.equal(short.length, 1);
    assert.match(short[0]?.matchConditions.at(-1)?.expression ?? '', /request\.namespace in \['q1', 'q2'\]/);
    const names = Array.from({ length: NARROWING_LIMITS.foldedNames + 1 }, (_, i) => `q-${i}`);
    const long = narrowEntry(base(), {
      anywhere: [{ cel: 'false || true' }],
      within: [{ namespaces: { names: [...names, 'Not A Namespace'] }, terms: [{}] }],
    });
    assert.equal(long.length, 2);
    const listed = long
      .flatMap((cell) => cell.namespaceSelector.matchExpressions ?? [])
      .filter(
        (requirement) => requirement.key === NAMESPACE_NAME_LABEL && requirement.values?.includes('q-0'),
      );
    assert.deepEqual(
      listed.map((requirement) => requirement.operator).sort(),
      ['In', 'NotIn'],
      'the list selects one entry and is excluded from the other',
    );
    assert.ok(listed.every((requirement) => !requirement.values?.includes('Not A Namespace')));
  });
});

describe('CEL string literals', () => {
  it('write any string back as itself', () => {
    for (const text of ["it's", 'back\\slash', 'tab\tnew\nline', 'é', '😀', '\u0000', 'plain']) {
      const literal = celString(text);
      assert.ok(literal);
      const evaluated = compileCel(`${literal} == request`).evaluate({
        object: null,
        oldObject: null,
        request: text,
      });
      assert.equal(evaluated, true, literal);
    }
    assert.equal(celString('\ud800'), undefined);
  });
});
