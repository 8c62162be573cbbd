/**
 * Each webhook's examples, from its folder (webhook/webhooks/<name>/examples.ts): the valid
 * reviews the fuzzer and the benches start from, and the inputs of its match conditions. Read
 * for every folder of webhook/webhooks/index.ts, so a new webhook needs no line here; a folder
 * without examples is an error naming the file to write.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WEBHOOKS } from '../../webhook/webhooks/index.js';
import type { TableContext } from '../../webhook/table.js';
import type { ConditionVariables } from './condition-inputs.js';
import type { Seed } from '../fuzz/seed-kit.js';

/** What a match condition evaluates to: true, false, or an error (which the failure policy decides). */
export type ConditionOutcome = boolean | 'error';

export interface ConditionExample {
  /** The variables it is evaluated on: the requests its webhook is registered for, in the shapes that decide it. */
  inputs: () => ConditionVariables[];
  /** What it means, written apart from its CEL, for the context the table was built under. */
  meaning: (variables: ConditionVariables, context: TableContext) => ConditionOutcome;
}

export interface WebhookExamples {
  /** Valid reviews of this webhook's path, at least one, each with its hot spots. */
  seeds: () => Seed[];
  /** Each of its match conditions, by the condition's name. */
  conditions?: Readonly<Record<string, ConditionExample>>;
}

const RUN = 'npx tsx scripts/run-tests.ts unit test/unit/webhook/webhook-folders.test.ts';

const loaded = new Map<string, WebhookExamples | string>();
for (const { name } of WEBHOOKS) {
  const url = new URL(`../../webhook/webhooks/${name}/examples.ts`, import.meta.url);
  const file = `webhook/webhooks/${name}/examples.ts`;
  if (!existsSync(fileURLToPath(url))) {
    loaded.set(
      name,
      `webhook ${name} has no examples: write ${file} (seeds, and conditions: the inputs and meaning of its match conditions), then run ${RUN}`,
    );
    continue;
  }
  const module = (await import(url.href)) as { examples?: WebhookExamples };
  loaded.set(name, module.examples ?? `${file} exports no \`examples\`: export them there, then run ${RUN}`);
}

/** Whether each webhook's folder has examples: the problem, by webhook, for those that do not. */
export function missingExamples(): Map<string, string> {
  return new Map([...loaded].filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The examples of the webhook named `name` (as overrides name it); throws naming the file when it has none. */
export function webhookExamples(name: string): WebhookExamples {
  const examples = loaded.get(name);
  if (examples === undefined) throw new Error(`no webhook ${name} in webhook/webhooks/index.ts`);
  if (typeof examples === 'string') throw new Error(examples);
  return examples;
}
