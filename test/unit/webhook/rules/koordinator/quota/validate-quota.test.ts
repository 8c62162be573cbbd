import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  AdmissionRequest,
  Decision,
  KubeObject,
  Operation,
} from '../../../../../../webhook/admission/types.js';
import { quotaView } from '../../../../../../webhook/rules/koordinator/quota/quota-view.js';
import { elasticQuotaValidator } from '../../../../../../webhook/rules/koordinator/quota/validate-quota.js';
import { stateSnapshot } from '../../../../../harness/state.js';
import { admissionRequest, ELASTIC_QUOTA } from '../../../../../harness/requests.js';

/** The validator with Koordinator's default gates. */
const validateElasticQuota = elasticQuotaValidator({ maxKeysSubset: false });

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
  return admissionRequest({ ...ELASTIC_QUOTA, namespace: 'team', operation, object, oldObject });
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
  // Koordinator's messages, verbatim (typos included), each after the field it is about.
  const LP = 'metadata.labels[quota.scheduling.koordinator.sh/parent]';
  const LT = 'metadata.labels[quota.scheduling.koordinator.sh/tree-id]';
  const LI = 'metadata.labels[quota.scheduling.koordinator.sh/is-parent]';
  const AN = 'metadata.annotations[quota.scheduling.koordinator.sh/namespaces]';
  const KEYS = 'failed to check sub and parent group quotaKey, err: checkSubAndParentGroupQuotaKey failed:';
  const withPods = stateSnapshot({
    elasticQuotas: [...existing.map((q) => quotaView(q)), quotaView(quota('busy', { min: {} }))],
    quotaPods: { busy: ['team/p1', 'team/p2', 'team/p3'], leaf: ['team/only'] },
  });
  const upstream: [string, AdmissionRequest, string, ReturnType<typeof stateSnapshot>?][] = [
    [
      'AddQuota quota already exist',
      review('CREATE', quota('a')),
      'metadata.name: AddQuota quota already exist:a',
    ],
    [
      'AddQuota … annotation namespace … is already bound',
      review('CREATE', quota('n', { namespaces: ['ns-a'] })),
      `${AN}: AddQuota quota n's annotation namespace ns-a is already bound to quota a`,
    ],
    [
      'invalid quota (system quotas)',
      review(
        'UPDATE',
        quota('koordinator-root-quota', { max: { cpu: '99' } }),
        quota('koordinator-root-quota'),
      ),
      'metadata.name: invalid quota koordinator-root-quota',
    ],
    [
      'UpdadteQuota … is already bound',
      review('UPDATE', quota('b', { parent: 'parent', treeId: 't1', namespaces: ['ns-a'] }), existing[2]),
      `${AN}: UpdadteQuota, quota b update namespaces, but namespace ns-a is already bound to quota a`,
    ],
    [
      'UpdateQuota quota not exist in quotaInfoMap',
      review('UPDATE', quota('ghost', { max: { cpu: '5' } }), quota('ghost')),
      'metadata.name: UpdateQuota quota not exist in quotaInfoMap:ghost',
    ],
    [
      'can not delete quotaGroup',
      review('DELETE', null, quota('koordinator-default-quota')),
      'metadata.name: can not delete quotaGroup :koordinator-default-quota',
    ],
    ['not found quota', review('DELETE', null, quota('ghost')), 'metadata.name: not found quota:ghost'],
    [
      'delete quota failed … child quotas',
      review('DELETE', null, existing[0]),
      'metadata.name: delete quota failed, quota parent has 2 child quotas',
    ],
    [
      'delete quota failed … child pods (at most two named)',
      review('DELETE', null, quota('busy')),
      'metadata.name: delete quota failed, quota busy has 3 child pods: p1, p2, ...',
      withPods,
    ],
    [
      'delete quota failed … child pods (one)',
      review('DELETE', null, existing[4]),
      'metadata.name: delete quota failed, quota leaf has 1 child pods: only',
      withPods,
    ],
    [
      "quota.Spec.Max's value < 0",
      review('CREATE', quota('n', { max: { memory: '-1', cpu: '-1' }, min: {} })),
      "spec.max: n quota.Spec.Max's value < 0, in dimensions :[cpu memory]",
    ],
    [
      "quota.Spec.Min's value < 0",
      review('CREATE', quota('n', { min: { cpu: '-1' } })),
      "spec.min: n quota.Spec.Min's value < 0, in dimensions :[cpu]",
    ],
    [
      "quota.Annotation[shared-weight]'s value < 0",
      review('CREATE', quota('n', { annotations: { [L('shared-weight')]: '{"cpu":"-1"}' } })),
      `metadata.annotations[${L('shared-weight')}]: n quota.Annotation[${L('shared-weight')}]'s value < 0, in dimension :[cpu]`,
    ],
    [
      'resourceKey … is included in min, which is not included in max',
      review('CREATE', quota('n', { min: { gpu: '1' } })),
      'spec.min[gpu]: resourceKey gpu of quota n is included in min, which is not included in max',
    ],
    [
      'resourceKey … min > max',
      review('CREATE', quota('n', { min: { cpu: '20' } })),
      'spec.min[cpu]: resourceKey cpu of quota n min 20 > max 10',
    ],
    [
      "max-strict-check-resource-keys's value is invalid",
      review('CREATE', quota('n', { annotations: { [L('max-strict-check-resource-keys')]: '{"cpu":1}' } })),
      `metadata.annotations[${L('max-strict-check-resource-keys')}]: n quota.Annotation[${L('max-strict-check-resource-keys')}]'s value is invalid: must be a JSON array of resource names`,
    ],
    [
      'resourceKey … is included in used, which is not included in max',
      review(
        'CREATE',
        quota('n', { used: { gpu: '1' }, annotations: { [L('max-strict-check-resource-keys')]: '["gpu"]' } }),
      ),
      'spec.max[gpu]: resourceKey gpu of quota n is included in used, which is not included in max but should check max >= used',
    ],
    [
      'resourceKey … max < used',
      review(
        'CREATE',
        quota('n', {
          used: { cpu: '11' },
          annotations: { [L('max-strict-check-resource-keys')]: '["cpu"]' },
        }),
      ),
      'spec.max[cpu]: resourceKey cpu of quota n max 10 < used 11',
    ],
    [
      'quota has children, isParent is forbidden to modify as false',
      review(
        'UPDATE',
        quota('parent', {
          treeId: 't1',
          min: { cpu: '4', memory: '4Gi' },
          max: { cpu: '10', memory: '10Gi' },
        }),
        existing[0],
      ),
      `${LI}: quota has children, isParent is forbidden to modify as false, quotaName:parent`,
    ],
    [
      'quota has bound pods, isParent is forbidden to modify as true',
      review('UPDATE', quota('leaf', { isParent: true, min: { cpu: '1' }, max: { cpu: '2' } }), existing[4]),
      `${LI}: quota has bound pods, isParent is forbidden to modify as true, quotaName: leaf`,
      withPods,
    ],
    [
      'tree id changed',
      review(
        'UPDATE',
        quota('parent', {
          isParent: true,
          treeId: 't9',
          min: { cpu: '4', memory: '4Gi' },
          max: { cpu: '10', memory: '10Gi' },
        }),
        existing[0],
      ),
      `${LT}: parent tree id changed [t1] vs [t9]`,
    ],
    [
      'tree id is different from parent',
      review(
        'CREATE',
        quota('n', { parent: 'parent', treeId: 't9', max: { cpu: '1', memory: '1Gi' }, min: {} }),
      ),
      `${LT}: n tree id is different from parent parent, [t9] vs [t1]`,
    ],
    [
      'tree id is different from child',
      // A child stored while its parent was not (the parent was deleted, or came later).
      review('CREATE', quota('newp', { isParent: true, treeId: 't1', min: {}, max: { cpu: '10' } })),
      `${LT}: newp tree id is different from child c2, [t1] vs [t2]`,
      stateSnapshot({
        elasticQuotas: [
          ...existing.map((q) => quotaView(q)),
          quotaView(quota('c2', { parent: 'newp', treeId: 't2', min: {} })),
        ],
      }),
    ],
    [
      'has parentName … but not find parentInfo in quotaInfoMap',
      review('CREATE', quota('n', { parent: 'ghost' })),
      `${LP}: n has parentName ghost but not find parentInfo in quotaInfoMap`,
    ],
    [
      "has parentName … but the parentQuotaInfo's IsParent is false",
      review('CREATE', quota('n', { parent: 'leaf' })),
      `${LP}: n has parentName leaf but the parentQuotaInfo's IsParent is false`,
    ],
    [
      "<parent>'s max keys are not the same with <child>'s",
      review('CREATE', quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '1' }, min: {} })),
      `spec.max: ${KEYS} parent's max keys are not the same with n's`,
    ],
    [
      "<child>'s max keys are not the same with <quota>'s",
      review(
        'UPDATE',
        quota('parent', {
          isParent: true,
          treeId: 't1',
          min: { cpu: '4', memory: '4Gi' },
          max: { cpu: '10', memory: '10Gi', gpu: '1' },
        }),
        existing[0],
      ),
      `spec.max: ${KEYS} a's max keys are not the same with parent's`,
    ],
    [
      "<child>'s min keys are not all included in <parent>'s",
      review(
        'CREATE',
        quota('n', {
          parent: 'parent3',
          treeId: 't3',
          max: { cpu: '1', memory: '1Gi' },
          min: { memory: '1Gi' },
        }),
      ),
      `spec.min: ${KEYS} n's min keys are not all included in parent3's`,
    ],
    [
      "checkMinQuotaSum all brothers' MinQuota > parent MinQuota",
      review(
        'CREATE',
        quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '2' } }),
      ),
      "spec.min: checkMinQuotaSum all brothers' MinQuota > parent MinQuota, parent: parent",
    ],
    [
      "checkMinQuotaSum all children's MinQuota > current MinQuota",
      review(
        'UPDATE',
        quota('parent', {
          isParent: true,
          treeId: 't1',
          min: { cpu: '2', memory: '4Gi' },
          max: { cpu: '10', memory: '10Gi' },
        }),
        existing[0],
      ),
      "spec.min: checkMinQuotaSum all children's MinQuota > current MinQuota, current: parent",
    ],
  ];
  for (const [label, request, expected, at] of upstream) {
    it(`refuses with Koordinator's message: ${label}`, () => {
      assert.equal(refusal(validateElasticQuota(request, at ?? state)), expected);
    });
  }

  it("refuses with Koordinator's message: <child>'s max keys are not all included in <parent>'s (gate on)", () => {
    const wider = quota('w', { parent: 'parent', treeId: 't1', max: { cpu: '1', gpu: '1' }, min: {} });
    assert.equal(
      refusal(elasticQuotaValidator({ maxKeysSubset: true })(review('CREATE', wider), state)),
      `spec.max: ${KEYS} w's max keys are not all included in parent's`,
    );
  });

  it('refuses in its own words what Koordinator does not check', () => {
    // A shared weight or strict-keys annotation that is no JSON (Koordinator returns Go's parser error).
    assert.equal(
      refusal(
        validateElasticQuota(
          review('CREATE', quota('n', { annotations: { [L('shared-weight')]: '{' } })),
          state,
        ),
      ),
      `metadata.annotations[${L('shared-weight')}]: not valid JSON`,
    );
    // A child's max above its parent's.
    assert.equal(
      refusal(
        validateElasticQuota(
          review(
            'CREATE',
            quota('n', { parent: 'parent', treeId: 't1', max: { cpu: '11', memory: '1Gi' }, min: {} }),
          ),
          state,
        ),
      ),
      'spec.max: resource cpu: max 11 of n exceeds max 10 of its parent parent',
    );
  });

  it('allows a valid child', () => {
    const child = quota('c', {
      parent: 'parent',
      treeId: 't1',
      min: { cpu: '1' },
      max: { cpu: '3', memory: '1Gi' },
    });
    assert.equal(validateElasticQuota(review('CREATE', child), state).allowed, true);
  });

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

  it('refuses re-parenting a quota under its own descendant where Koordinator would let it through', () => {
    // p ← q (a parent quota too); moving p under q passes every check of Koordinator's when the
    // min sums are skipped, and would make a loop.
    const tree = [
      quota('p', { isParent: true, treeId: 't', min: {}, max: { cpu: '10' } }),
      quota('q', { parent: 'p', isParent: true, treeId: 't', min: {}, max: { cpu: '10' } }),
    ];
    const loopState = stateSnapshot({ elasticQuotas: tree.map((q) => quotaView(q)) });
    const looped = quota('p', {
      parent: 'q',
      isParent: true,
      treeId: 't',
      min: {},
      max: { cpu: '10' },
      labels: { [L('allow-force-update')]: 'true' },
    });
    assert.equal(
      refusal(validateElasticQuota(review('UPDATE', looped, tree[0]), loopState)),
      `${LP}: quota p cannot hang under q: that would make it its own ancestor`,
    );
  });

  it('refuses a child whose max exceeds its parent’s, and a parent narrowed below a child', () => {
    const narrowed = quota('parent', {
      isParent: true,
      treeId: 't1',
      min: { cpu: '4', memory: '4Gi' },
      max: { cpu: '4', memory: '10Gi' },
    });
    assert.equal(
      refusal(validateElasticQuota(review('UPDATE', narrowed, existing[0]), state)),
      'spec.max: resource cpu: max 10 of a exceeds max 4 of its parent parent',
    );
  });

  it('lets updates that leave the tree alone through, and a delete of a leaf', () => {
    const old = existing[1]!;
    const relabelled = structuredClone(old);
    (relabelled.metadata.annotations as Record<string, string>)[L('shared-weight')] = '{"cpu":"1"}';
    assert.equal(validateElasticQuota(review('UPDATE', relabelled, old), state).allowed, true);
    assert.equal(validateElasticQuota(review('DELETE', null, existing[4]), state).allowed, true);
    // A status-only update of a quota the store does not know yet is not checked either.
    const ghost = quota('ghost');
    const withStatus = { ...structuredClone(ghost), status: { used: { cpu: '1' } } };
    assert.equal(validateElasticQuota(review('UPDATE', withStatus, ghost), state).allowed, true);
  });

  it('counts only the pods labelled for a quota against its delete, as Koordinator’s label index does', () => {
    const bound = stateSnapshot({
      elasticQuotas: [...existing.map((q) => quotaView(q)), quotaView(quota('busy', { min: {} }))],
      quotaPods: { busy: ['team/labelled', 'team/by-namespace'] },
      quotaLabelledPods: { busy: ['team/labelled'] },
    });
    assert.equal(
      refusal(validateElasticQuota(review('DELETE', null, quota('busy')), bound)),
      'metadata.name: delete quota failed, quota busy has 1 child pods: labelled',
    );
  });

  it('checks an update that writes is-parent: "false" on a quota without the label (Koordinator compares the labels as written)', () => {
    // b's min is past what its parent holds for its children: refused once the update is checked.
    const max = { cpu: '10', memory: '10Gi' };
    const before = quota('b', { parent: 'parent', treeId: 't1', min: { cpu: '9' }, max });
    const after = quota('b', {
      parent: 'parent',
      treeId: 't1',
      min: { cpu: '9' },
      max,
      labels: { [L('is-parent')]: 'false' },
    });
    assert.equal(
      validateElasticQuota(review('UPDATE', structuredClone(before), before), state).allowed,
      true,
    );
    assert.match(refusal(validateElasticQuota(review('UPDATE', after, before), state)), /checkMinQuotaSum/);
  });

  it('answers every refusal with code 400 BadRequest', () => {
    const decision = validateElasticQuota(review('DELETE', null, quota('ghost')), state);
    assert.equal(decision.allowed, false);
    assert.equal(decision.allowed ? 0 : decision.code, 400);
    assert.equal(decision.allowed ? '' : decision.reason, 'BadRequest');
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
    assert.equal(validateElasticQuota(review('CREATE', child), state).allowed, false);
    assert.equal(
      elasticQuotaValidator({ maxKeysSubset: true })(review('CREATE', child), state).allowed,
      true,
    );
  });
});
