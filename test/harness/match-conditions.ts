/**
 * Every match condition the webhook table can produce, and the variables the API server would
 * bind when it evaluates them: the table is built under each kind of context the operator gives
 * it (no tier mapping, KubeNexus's default and custom GPU resource lists; the ConfigMaps it
 * watches with and without the pod-enhanced-validator gate, in shared and separate namespaces,
 * and none), and the inputs are those each webhook's folder names (./condition-inputs.ts).
 */
import { parseFeatureGates } from '../../webhook/feature-gates.js';
import { watchedConfigMaps } from '../../webhook/names.js';
import { shortName, webhookTable, type FailurePolicy, type TableContext } from '../../webhook/table.js';

import { GPU_RESOURCE_LISTS, type ConditionVariables } from './condition-inputs.js';
import { webhookExamples, type ConditionExample } from './webhook-examples.js';

export type { CelJson, ConditionVariables } from './condition-inputs.js';

export interface TableCondition {
  webhook: string;
  name: string;
  expression: string;
  failurePolicy: FailurePolicy;
  /** The context the table was built under: the lists the expression was written from. */
  context: TableContext;
}

function contexts(): TableContext[] {
  const withoutValidator = parseFeatureGates('');
  const withValidator = parseFeatureGates('EnablePodEnhancedValidator=true');
  const configMapLists = [
    [],
    watchedConfigMaps('admission-system', 'koordinator-system', withoutValidator),
    watchedConfigMaps('admission-system', 'koordinator-system', withValidator),
    watchedConfigMaps('shared', 'shared', withValidator),
  ];
  const base = {
    namespace: 'admission-system',
    excludedNamespaces: ['kube-public'],
    tierLabelKey: 'tenant.kubenexus.io/tier',
    koordinatorNamespace: 'koordinator-system',
    gates: withValidator,
  };
  return GPU_RESOURCE_LISTS.flatMap((gpuResourceNames) =>
    configMapLists.map((configMaps) => ({ ...base, gpuResourceNames, configMaps })),
  );
}

/** Every distinct condition of every table those contexts build, with the failure policy it runs under. */
export function tableConditions(): TableCondition[] {
  const seen = new Map<string, TableCondition>();
  for (const context of contexts()) {
    for (const entry of webhookTable(context)) {
      for (const { name, expression } of entry.matchConditions) {
        if (seen.has(expression)) continue;
        seen.set(expression, {
          webhook: entry.name,
          name,
          expression,
          failurePolicy: entry.failurePolicy,
          context,
        });
      }
    }
  }
  return [...seen.values()];
}

/**
 * The inputs and meaning of each condition: those its webhook's folder gives for it
 * (`conditions` in webhook/webhooks/<name>/examples.ts). A condition without them is an error
 * naming that file, never a silent default.
 */
export function conditionExample(condition: TableCondition): ConditionExample {
  const name = shortName(condition.webhook);
  const example = webhookExamples(name).conditions?.[condition.name];
  if (!example) {
    throw new Error(
      `webhook ${name} has match condition ${condition.name} but webhook/webhooks/${name}/examples.ts ` +
        `gives neither its inputs nor its meaning: add them to its \`conditions\` (test/harness/condition-inputs.ts ` +
        `has pods and ConfigMaps), then run npx tsx scripts/run-tests.ts unit test/unit/webhook/chain/match-conditions.test.ts`,
    );
  }
  return example;
}

/** The inputs each condition is evaluated on (see conditionExample). */
export function conditionInputs(condition: TableCondition): ConditionVariables[] {
  return conditionExample(condition).inputs();
}
