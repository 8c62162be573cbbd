/**
 * What the command prints. `text`: a headline per object (ADMITTED, MUTATED, WARN or DENIED, the kind,
 * namespace and name, where it came from; WARN: a refusal its webhook's enforcement, warn or dryrun,
 * turned into an admission), the webhooks that ran, the refusal, warnings, and each
 * mutation as a readable diff (`+ spec.nodeSelector: {gpu.nvidia.com/class: h100}`). `json` and
 * `yaml`: a v1 List of the objects as they would be stored (mutated, denied ones left out), so the
 * output can go straight to `kubectl apply -f -`, with the decisions in its `report` field.
 */
import { stringify } from 'yaml';
import type { JsonValue, KubeObject } from '../../../webhook/admission/types.js';
import { truncate } from '../../../webhook/util/bounded-text.js';
import type { OutputFormat } from './args.js';
import type { WebhookCall } from '../../../webhook/chain/call-webhook.js';
import type { Verdict } from '../../../webhook/chain/run-chain.js';

export interface ObjectResult {
  /** file#document */
  where: string;
  kind: string;
  namespace: string | undefined;
  name: string;
  /** For a pod expanded from a workload: the workload, as `Deployment/web`. */
  expandedFrom?: string;
  verdict: Verdict;
}

export type Outcome = 'ADMITTED' | 'MUTATED' | 'WARN' | 'DENIED';

/** How long one value of a diff line may be: the line stays readable, the rest is marked as cut. */
const MAX_DIFF_VALUE_CHARS = 200;

export function outcomeOf(verdict: Verdict): Outcome {
  if (!verdict.allowed) return 'DENIED';
  if (verdict.calls.some((call) => call.wouldRefuse !== undefined)) return 'WARN';
  return verdict.calls.some((call) => call.patch.length > 0) ? 'MUTATED' : 'ADMITTED';
}

/** A JSON pointer as a field path: `/spec/nodeSelector/gpu.nvidia.com~1class` → `spec.nodeSelector[gpu.nvidia.com/class]`. */
export function fieldPath(pointer: string): string {
  if (pointer === '') return '.';
  let path = '';
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (/^\d+$/.test(segment) || !/^[A-Za-z_$][\w$-]*$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path;
}

/** A value on one line, in YAML flow style. */
function flow(value: JsonValue): string {
  const text = stringify(value, {
    collectionStyle: 'flow',
    lineWidth: 0,
    aliasDuplicateObjects: false,
  }).trim();
  return truncate(text, MAX_DIFF_VALUE_CHARS);
}

/** The patch of one webhook as diff lines: `+` added, `~` replaced, `-` removed. */
function diffLines(call: WebhookCall): string[] {
  return call.patch.map((operation) => {
    const path = fieldPath(operation.path);
    if (operation.op === 'remove') return `- ${path}`;
    return `${operation.op === 'add' ? '+' : '~'} ${path}: ${flow(operation.value)}`;
  });
}

function title(result: ObjectResult): string {
  const at = result.namespace ? `${result.namespace}/${result.name}` : result.name;
  const from = result.expandedFrom ? ` (the pod of ${result.expandedFrom})` : '';
  return `${result.kind} ${at}${from}`;
}

function callSummary(call: WebhookCall): string {
  const what = !call.allowed
    ? 'denied'
    : call.wouldRefuse !== undefined
      ? `would deny (${call.enforcement ?? `${call.step?.name ?? ''} ${call.step?.action ?? ''}`})`
      : call.patch.length > 0
        ? 'patched'
        : 'allowed';
  return `${call.webhook}${call.round === 2 ? ' (reinvoked)' : ''}: ${what}`;
}

export function formatText(results: readonly ObjectResult[]): string {
  const lines: string[] = [];
  for (const result of results) {
    const { verdict } = result;
    lines.push(`${outcomeOf(verdict).padEnd(8)} ${title(result)}  [${result.where}]`);
    lines.push(
      `  webhooks: ${verdict.calls.length > 0 ? verdict.calls.map(callSummary).join(', ') : 'none applies'}`,
    );
    if (verdict.denial) {
      lines.push(
        `  denied by ${verdict.denial.step ?? verdict.denial.webhook} (${verdict.denial.code}): ${verdict.denial.message.replaceAll('\n', '\n    ')}`,
      );
    }
    for (const call of verdict.calls) {
      for (const warning of call.warnings) lines.push(`  warning (${call.webhook}): ${warning}`);
      // warn says it in a warning (above); dryrun answers nothing, so it is said here.
      if (call.enforcement !== 'dryrun' && call.step?.action !== 'dryrun') continue;
      if (call.wouldRefuse !== undefined)
        lines.push(
          `  dryrun (${call.enforcement === 'dryrun' ? call.webhook : (call.step?.name ?? call.webhook)}): would refuse: ${call.wouldRefuse.replaceAll('\n', '\n    ')}`,
        );
      if (call.wouldChange)
        lines.push(`  dryrun (${call.webhook}): would change: ${call.wouldChange.join(', ')}`);
    }
    for (const note of verdict.notes) lines.push(`  note: ${note}`);
    for (const call of verdict.calls) {
      const diff = diffLines(call);
      if (diff.length === 0) continue;
      lines.push(`  ${call.webhook}${call.round === 2 ? ' (reinvoked)' : ''}:`);
      for (const line of diff) lines.push(`    ${line}`);
    }
  }
  const denied = results.filter((result) => !result.verdict.allowed).length;
  const warned = results.filter((result) => outcomeOf(result.verdict) === 'WARN').length;
  const softened = warned > 0 ? `; ${warned} admitted only by their webhooks' enforcement (WARN)` : '';
  lines.push(
    '',
    `${results.length} objects: ${results.length - denied} admitted, ${denied} denied${softened}`,
  );
  return `${lines.join('\n')}\n`;
}

/** The decisions, as the machine-readable report shows them. */
function reportOf(result: ObjectResult): Record<string, unknown> {
  const { verdict } = result;
  return {
    source: result.where,
    kind: result.kind,
    ...(result.namespace ? { namespace: result.namespace } : {}),
    name: result.name,
    ...(result.expandedFrom ? { expandedFrom: result.expandedFrom } : {}),
    outcome: outcomeOf(verdict),
    ...(verdict.denial ? { denial: verdict.denial } : {}),
    webhooks: verdict.calls.map((call) => ({
      name: call.webhook,
      type: call.type,
      ...(call.round === 2 ? { reinvoked: true } : {}),
      allowed: call.allowed,
      ...(call.message !== undefined ? { message: call.message, code: call.code } : {}),
      ...(call.warnings.length > 0 ? { warnings: call.warnings } : {}),
      ...(call.patch.length > 0 ? { patch: call.patch } : {}),
      ...(call.enforcement ? { enforcement: call.enforcement } : {}),
      ...(call.step ? { step: call.step } : {}),
      ...(call.wouldRefuse !== undefined ? { wouldRefuse: call.wouldRefuse } : {}),
      ...(call.wouldChange ? { wouldChange: call.wouldChange } : {}),
    })),
    ...(verdict.notes.length > 0 ? { notes: verdict.notes } : {}),
  };
}

export function formatMachine(
  results: readonly ObjectResult[],
  format: Exclude<OutputFormat, 'text'>,
): string {
  // Expanded pods are judged, not applied: their workload is what goes to the cluster.
  const items: KubeObject[] = results
    .filter((result) => result.verdict.allowed && result.verdict.object && !result.expandedFrom)
    .map((result) => result.verdict.object as KubeObject);
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: {},
    items,
    report: results.map(reportOf),
  };
  return format === 'json'
    ? `${JSON.stringify(list, null, 2)}\n`
    : stringify(list, { lineWidth: 0, aliasDuplicateObjects: false });
}
