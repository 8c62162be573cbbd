import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  KubeObject,
  Operation,
} from '../../../../../webhook/admission/types.js';
import { quotaView } from '../../../../../webhook/rules/quota/quota-view.js';
import {
  elasticQuotaValidator,
  validateElasticQuota,
} from '../../../../../webhook/rules/quota/validate-quota.js';
import { stateSnapshot } from '../../../../harness/state.js';

const L = (key: string): string => `quota.scheduling.koordinator.sh/${key}`;

interface QuotaSpec {
  parent?: string;
  isParent?: boolean;
  treeId?: string;
  min?: Record<string, string>;
  max?: Record<string, string>;
  namespaces?: string[];
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  used?: Record<string, string>;
}

function quota(name: string, spec: QuotaSpec = {}): KubeObject {
  return {
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: {
      name,
      namespace: 'team',
      labels: {
        ...(spec.parent ? { [L('parent')]: spec.parent } : {}),
        ...(spec.isParent ? { [L('is-parent')]: 'true' } : {}),
        ...(spec.treeId ? { [L('tree-id')]: spec.treeId } : {}),
        ...spec.labels,
      },
      annotations: {
        ...(spec.namespaces ? { [L('namespaces')]: JSON.stringify(spec.namespaces) } : {}),
        ...spec.annotations,
      },
    },
    spec: { min: spec.min ?? { cpu: '1' }, max: spec.max ?? { cpu: '10' } },
    ...(spec.used ? { status: { used: spec.used } } : {}),
  };
}

function review(
  operation: Operation,
  object: KubeObject | null,
  oldObject: KubeObject | null = null,
): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'scheduling.sigs.k8s.io', version: 'v1alpha1', kind: 'ElasticQuota' },
    resource: { group: 'scheduling.sigs.k8s.io', version: 'v1alpha1', resource: 'elasticquotas' },
    namespace: 'team',
    operation,
    userInfo: {},
    object,
    oldObject,
    dryRun: false,
  };
}

// A tree: root ← parent (min cpu 4, max cpu 10) ← a (min 2), b (min 1); parent2 in tree t2.
const existing = [
  quota('parent', {
    isParent: true,
    treeId: 't1',
    min: { cpu: '4', memory: '4Gi' },
    max: { cpu: '10', memory: '10Gi' },
  }),
  quota('a', {
    parent: 'parent',
    treeId: 't1',
    min: { cpu: '2' },
    max: { cpu: '10', memory: '10Gi' },
    namespaces: ['ns-a'],
  }),
  quota('b', { parent: 'parent', treeId: 't1', min: { cpu: '1' }, max: { cpu: '5', memory: '5Gi' } }),
  quota('parent2', { isParent: true, treeId: 't2', min: { cpu: '4' }, max: { cpu: '10' } }),
  quota('leaf', { min: { cpu: '1' }, max: { cpu: '2' } }),
  quota('parent3', { isParent: true, treeId: 't3', min: { cpu: '4' }, max: { cpu: '10', memory: '10Gi' } }),
];
const state = stateSnapshot({ elasticQuotas: existing.map((q) => quotaView(q)) });

function refusal(decision: Decision): string {
  assert.equal(decision.allowed, false, 'expected a refusal');
  return decision.allowed ? '' : decision.message;
}

describe('validateElasticQuota', () => {
  it('allows a valid child', () => {
    const child = quota('c', {
      parent: 'parent',
      treeId: 't1',
      min: { cpu: '1' },
      max: { cpu: '3', memory: '1Gi' },
    });
    assert.equal(validateElasticQuota(review('CREATE', child), state).allowed, true);
  });

  const refusedCreates: [string, KubeObject, RegExp][] = [
    ['a name that exists', quota('a'), /^metadata\.name: quota a already exists \(in namespace team\)/],
    [
      'a negative max',
      quota('n', { max: { cpu: '-1' } }),
      /^spec\.max: quota n has a negative Max in dimensions \[cpu\]/,
    ],
    [
      'a negative min',
      quota('n', { min: { cpu: '-1' } }),
      /^spec\.min: quota n has a negative Min in dimensions \[cpu\]/,
    ],
    [
      'a min key missing from max',
      quota('n', { min: { gpu: '1' } }),
      /^spec\.min\[gpu\]: resource gpu of quota n is in min but not in max/,
    ],
    [
      'min above max',
      quota('n', { min: { cpu: '20' } }),
      /^spec\.min\[cpu\]: resource cpu of quota n: min 20 > max 10/,
    ],
    [
      'a shared weight that is not JSON',
      quota('n', { annotations: { [L('shared-weight')]: '{' } }),
      /^metadata\.annotations\[quota\.scheduling\.koordinator\.sh\/shared-weight\]: not valid JSON/,
    ],
    [
      'a negative shared weight',
      quota('n', { annotations: { [L('shared-weight')]: '{"cpu":"-1"}' } }),
      /negative shared weight in dimensions \[cpu\]/,
    ],
    ['a bound namespace', quota('n', { namespaces: ['ns-a'] }), /namespace ns-a is already bound to quota a/],
    [
      'a missing parent',
      quota('n', { parent: 'ghost' }),
      /^metadata\.labels\[quota\.scheduling\.koordinator\.sh\/parent\]: quota n: parent quota ghost does not exist/,
    ],
    [
      'a parent that is not a parent',
      quota('n', { parent: 'leaf' }),
      /parent quota leaf is not a parent quota/,
    ],
    [
      'a tree id other than the parent’s',
      quota('n', { parent: 'parent', treeId: 't9', max: { cpu: '1', memory: '1Gi' }, min: {} }),
      /tree id \[t9\] differs from parent parent's \[t1\]/,
    ],
    [
      'max keys other than the parent’s',
      quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '1' }, min: {} }),
      /the max keys of n \[cpu\] are not the same as its parent parent's \[cpu memory\]/,
    ],
    [
      'min keys beyond the parent’s',
      quota('n', {
        parent: 'parent3',
        treeId: 't3',
        max: { cpu: '1', memory: '1Gi' },
        min: { memory: '1Gi' },
      }),
      /the min keys of n \[memory\] are not all in its parent parent3's \[cpu\]/,
    ],
    [
      'a max above the parent’s (the seeds’ rule)',
      quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '11', memory: '1Gi' }, min: {} }),
      /resource cpu: max 11 of n exceeds max 10 of its parent parent/,
    ],
    [
      'children’s min above the parent’s',
      quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '2' } }),
      /the min of all children of parent in cpu \(5\) exceeds its min \(4\)/,
    ],
    [
      'a strict max below used',
      quota('n', { used: { cpu: '11' }, annotations: { [L('max-strict-check-resource-keys')]: '["cpu"]' } }),
      /^spec\.max\[cpu\]: resource cpu of quota n: max 10 < used 11/,
    ],
  ];
  for (const [label, object, message] of refusedCreates) {
    it(`refuses on CREATE ${label}`, () => {
      assert.match(refusal(validateElasticQuota(review('CREATE', object), state)), message);
    });
  }

  it('skips the min sums when allow-force-update is set', () => {
    const forced = quota('n', {
      parent: 'parent',
      treeId: 't1',
      max: { cpu: '2', memory: '1Gi' },
      min: { cpu: '2' },
      labels: { [L('allow-force-update')]: 'true' },
    });
    assert.equal(validateElasticQuota(review('CREATE', forced), state).allowed, true);
  });

  it('refuses re-parenting a quota under its own descendant (no cycles)', () => {
    const old = existing[0]!;
    const cyclic = quota('parent', {
      parent: 'a',
      isParent: true,
      treeId: 't1',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '10', memory: '10Gi' },
    });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', cyclic, old), state)),
      /cannot hang under a: that would make it its own ancestor/,
    );
    const self = quota('parent', {
      parent: 'parent',
      isParent: true,
      treeId: 't1',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '10', memory: '10Gi' },
    });
    assert.match(refusal(validateElasticQuota(review('UPDATE', self, old), state)), /its own ancestor/);
  });

  it('refuses changing the tree id, and unsetting is-parent while children remain', () => {
    const old = existing[0]!;
    const retreed = quota('parent', {
      isParent: true,
      treeId: 't9',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '10', memory: '10Gi' },
    });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', retreed, old), state)),
      /the tree id is immutable \(\[t1\] → \[t9\]\)/,
    );
    const demoted = quota('parent', {
      treeId: 't1',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '10', memory: '10Gi' },
    });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', demoted, old), state)),
      /has child quotas, so it must stay a parent/,
    );
  });

  it('refuses shrinking a parent below its children', () => {
    const old = existing[0]!;
    const shrunk = quota('parent', {
      isParent: true,
      treeId: 't1',
      min: { cpu: '2', memory: '4Gi' },
      max: { cpu: '10', memory: '10Gi' },
    });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', shrunk, old), state)),
      /the min of the children of parent in cpu \(3\) exceeds its min \(2\)/,
    );
    const narrowed = quota('parent', {
      isParent: true,
      treeId: 't1',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '4', memory: '10Gi' },
    });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', narrowed, old), state)),
      /max 10 of a exceeds max 4 of its parent parent/,
    );
  });

  it('lets updates that leave the tree alone through, and refuses changes to the system quotas', () => {
    const old = existing[1]!;
    const relabelled = structuredClone(old);
    (relabelled.metadata.annotations as Record<string, string>)[L('shared-weight')] = '{"cpu":"1"}';
    assert.equal(validateElasticQuota(review('UPDATE', relabelled, old), state).allowed, true);
    const root = quota('koordinator-root-quota');
    const changed = quota('koordinator-root-quota', { max: { cpu: '99' } });
    assert.match(
      refusal(validateElasticQuota(review('UPDATE', changed, root), state)),
      /quota koordinator-root-quota cannot be modified/,
    );
  });

  it('refuses deleting a quota with children or a system quota, and allows a leaf', () => {
    assert.match(
      refusal(validateElasticQuota(review('DELETE', null, existing[0]), state)),
      /quota parent still has 2 child quota\(s\): a, b/,
    );
    assert.match(
      refusal(validateElasticQuota(review('DELETE', null, quota('koordinator-default-quota')), state)),
      /cannot be deleted/,
    );
    assert.equal(validateElasticQuota(review('DELETE', null, existing[4]), state).allowed, true);
  });

  it('names the field of a quantity that does not parse', () => {
    assert.match(
      refusal(validateElasticQuota(review('CREATE', quota('n', { max: { cpu: 'lots' } })), state)),
      /^spec\.max\[cpu\]: "lots" is not a quantity/,
    );
  });

  it('refuses quantities past 2^63-1 units, naming the field, without computing them', () => {
    const cases: [QuotaSpec, string][] = [
      [{ max: { cpu: '1e50000000' } }, 'spec.max[cpu]: "1e50000000" is too large'],
      [{ max: { cpu: '1e1000000000' } }, 'spec.max[cpu]: "1e1000000000" is too large'],
      [{ max: { cpu: '9223372036854775808' } }, 'spec.max[cpu]: "9223372036854775808" is too large'],
      [{ max: { memory: '8Ei' } }, 'spec.max[memory]: "8Ei" is too large'],
      [{ min: { cpu: '-1e50000000' } }, 'spec.min[cpu]: "-1e50000000" is too large'],
      [
        { annotations: { [L('shared-weight')]: '{"cpu":"1e50000000"}' } },
        `metadata.annotations[${L('shared-weight')}][cpu]: "1e50000000" is too large`,
      ],
    ];
    for (const [spec, start] of cases) {
      const message = refusal(validateElasticQuota(review('CREATE', quota('n', spec)), state));
      assert.ok(message.startsWith(start), message);
      assert.ok(message.endsWith('quantities are bounded by 2^63-1 (9223372036854775807) units'), message);
    }
    const long = refusal(
      validateElasticQuota(review('CREATE', quota('n', { max: { cpu: '1'.repeat(100_000) } })), state),
    );
    assert.ok(long.length < 200, long);
  });

  it('accepts 2^63-1 units and 7Ei', () => {
    const max = { cpu: '9223372036854775807', memory: '7Ei' };
    const decision = validateElasticQuota(review('CREATE', quota('n', { max, min: {} })), state);
    assert.equal(decision.allowed, true, JSON.stringify(decision));
  });

  it('refuses a value that is not a string, naming its JSON type instead of a JS exception', () => {
    const object = quota('n', { annotations: { [L('shared-weight')]: '{"cpu":{"a":1}}' } });
    assert.equal(
      refusal(validateElasticQuota(review('CREATE', object), state)),
      `metadata.annotations[${L('shared-weight')}][cpu]: must be a quantity string, got a JSON object`,
    );
    const max = quota('n');
    (max.spec as { max: unknown }).max = { cpu: { nested: true } };
    assert.equal(
      refusal(validateElasticQuota(review('CREATE', max), state)),
      'spec.max[cpu]: must be a quantity string, got a JSON object',
    );
    const used = quota('n', { annotations: { [L('max-strict-check-resource-keys')]: '["cpu"]' } });
    used.status = { used: { cpu: [1] } };
    assert.equal(
      refusal(validateElasticQuota(review('CREATE', used), state)),
      'status.used[cpu]: must be a quantity string, got a JSON array',
    );
  });

  it('says an annotation is not JSON without quoting the parser', () => {
    const object = quota('n', { annotations: { [L('shared-weight')]: '{"cpu":' } });
    assert.equal(
      refusal(validateElasticQuota(review('CREATE', object), state)),
      `metadata.annotations[${L('shared-weight')}]: not valid JSON`,
    );
  });

  it('accepts a subset of the parent’s max keys with the gate ElasticQuotaEnableUpdateResourceKey', () => {
    const child = quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '1' }, min: {} });
    assert.match(
      refusal(validateElasticQuota(review('CREATE', child), state)),
      /are not the same as its parent/,
    );
    assert.equal(
      elasticQuotaValidator({ maxKeysSubset: true })(review('CREATE', child), state).allowed,
      true,
    );
    const wider = quota('w', { parent: 'parent', treeId: 't1', max: { cpu: '1', gpu: '1' }, min: {} });
    assert.match(
      refusal(elasticQuotaValidator({ maxKeysSubset: true })(review('CREATE', wider), state)),
      /the max keys of w \[cpu gpu\] are not all in its parent parent's \[cpu memory\]/,
    );
  });
});
