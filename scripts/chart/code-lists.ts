/**
 * What the chart's schema enumerates, read from the code that defines it: the feature gates (with
 * their defaults and the doc comments of webhook/rule-gates.ts), the webhooks of the one table,
 * and the enforcement actions. The chart never lists them by hand, so they cannot drift.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ENFORCEMENT_ACTIONS } from '../../webhook/enforcement/enforcement.js';
import { FEATURE_GATE_DEFAULTS, KOORDINATOR_GATE_ALIASES } from '../../webhook/feature-gates.js';
import { webhookCatalogue, type WebhookSummary } from '../../webhook/table.js';
import { repoRoot } from '../cluster/layout.js';

export interface GateDoc {
  name: string;
  default: boolean;
  description: string;
}

/** A Koordinator name the operator takes for one of its gates. */
export interface GateAlias {
  name: string;
  gate: string;
}

export interface CodeLists {
  gates: GateDoc[];
  aliases: GateAlias[];
  webhooks: readonly WebhookSummary[];
  enforcementActions: readonly string[];
}

const GATES_FILE = join('webhook', 'rule-gates.ts');

/** The doc comment of each property of RULE_GATE_DEFAULTS, by gate name. */
export function gateComments(source: string): Map<string, string> {
  const file = ts.createSourceFile(GATES_FILE, source, ts.ScriptTarget.Latest, true);
  const comments = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) {
      const text = ts
        .getJSDocCommentsAndTags(node)
        .filter(ts.isJSDoc)
        .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
      if (text !== '') comments.set(node.name.text, text);
    }
    ts.forEachChild(node, visit);
  };
  const declaration = file.statements
    .filter(ts.isVariableStatement)
    .flatMap((statement) => [...statement.declarationList.declarations])
    .find((d) => ts.isIdentifier(d.name) && d.name.text === 'RULE_GATE_DEFAULTS');
  if (!declaration?.initializer) throw new Error(`${GATES_FILE}: RULE_GATE_DEFAULTS not found`);
  visit(declaration.initializer);
  return comments;
}

/** A webhook gate says which webhook it serves; any other gate must carry a doc comment. */
function gateDescription(
  name: string,
  comment: string | undefined,
  webhooks: readonly WebhookSummary[],
): string {
  if (comment !== undefined) return comment;
  const served = webhooks.filter((webhook) => webhook.featureGate === name);
  if (served.length === 0) {
    throw new Error(
      `feature gate ${name} serves no webhook and has no doc comment in ${GATES_FILE}: say what it does there`,
    );
  }
  const names = served.map((webhook) => `\`${webhook.shortName}\``).join(', ');
  const kinds = [...new Set(served.map((webhook) => webhook.type))].map((type) =>
    type === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
  );
  const which = served.length === 1 ? `the ${names} webhook` : `the ${names} webhooks`;
  const absent = served.length === 1 ? 'it is' : 'they are';
  return `Serves ${which}; off, ${absent} absent from the ${kinds.join(' and ')}.`;
}

export function codeLists(): CodeLists {
  const comments = gateComments(readFileSync(join(repoRoot, GATES_FILE), 'utf8'));
  const webhooks = webhookCatalogue();
  const gates = Object.entries(FEATURE_GATE_DEFAULTS).map(([name, on]) => ({
    name,
    default: on,
    description: gateDescription(name, comments.get(name), webhooks),
  }));
  const aliases = Object.entries(KOORDINATOR_GATE_ALIASES).map(([name, gate]) => ({ name, gate }));
  return { gates, aliases, webhooks, enforcementActions: ENFORCEMENT_ACTIONS };
}
