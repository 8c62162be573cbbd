/** /mutate-pod: Koordinator's pod mutation (ClusterColocationProfiles, extended resources, GPU split). */
import { defineWebhook, matching } from '../define.js';
import { KINDS } from '../../kinds.js';
import { podMutator } from '../../rules/koordinator/pod/mutate-pod.js';
import { podMutatorReach } from '../../rules/koordinator/pod/mutate-pod-reach.js';
import { podMutation } from '../koordinator-pod-options.js';

/** Koordinator's opt-in label for pod UPDATE mutation. */
const MUTATING_UPDATE_LABEL = 'pod.koordinator.sh/mutating-update';

export const webhook = defineWebhook({
  name: 'mutate-pod',
  path: '/mutate-pod',
  type: 'mutating',
  resourceRules: [matching(KINDS.pod, ['CREATE', 'UPDATE'])],
  failurePolicy: 'Fail',
  timeoutSeconds: 10,
  matchConditionsHoldOn: ['CREATE'],
  reinvocationPolicy: 'Never',
  featureGate: 'PodMutatingWebhook',
  docs: {
    page: 'mutate-pod.md',
    entryPoint: 'rules/koordinator/pod/mutate-pod.ts',
    note: '(opted in)',
    checks:
      '`koordinator/colocation/apply-profiles-to-pod.ts`, `koordinator/colocation/colocation-profile.ts`, ' +
      '`koordinator/colocation/batch-resources.ts`, `koordinator/colocation/extended-resource-spec.ts`, ' +
      '`koordinator/quota/multi-quota-tree-affinity.ts`, `koordinator/device/device-resource-spec.ts`, `shared/step-skip.ts`',
  },
  build: (context) => {
    const options = podMutation(context);
    return {
      // Koordinator registers UPDATE only for pods that opt in with this label (its objectSelector);
      // a matchCondition says the same in one entry, so other pod updates never wait on us.
      matchConditions: [
        {
          name: 'create-or-opted-in-update',
          expression:
            "request.operation == 'CREATE' || (has(object.metadata.labels) && " +
            `'${MUTATING_UPDATE_LABEL}' in object.metadata.labels && ` +
            `object.metadata.labels['${MUTATING_UPDATE_LABEL}'] == 'true')`,
        },
      ],
      handler: podMutator(options),
      reach: podMutatorReach(options),
    };
  },
});
