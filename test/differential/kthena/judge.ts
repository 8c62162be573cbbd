/**
 * One review's two answers, Kthena's and ours, compared as the API server would read them
 * (allowed, message, the object after the patch), and every difference either explained by a
 * documented class (docs/rules/kthena.md) or reported.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject, KubeObject } from '../../../webhook/admission/types.js';
import { type Verdict, verdictOf } from '../compare.js';
import type { OracleAnswer } from './oracle-client.js';

/** The documented differences, each a section of docs/rules/kthena.md. */
export const KTHENA_DOCUMENTED = [
  {
    id: 'decode-refusal',
    page: 'docs/rules/kthena.md#deliberate-divergences-kthenas-behaviour-was-accidental (1)',
  },
  {
    id: 'nil-target-panic',
    page: 'docs/rules/kthena.md#deliberate-divergences-kthenas-behaviour-was-accidental (2)',
  },
  { id: 'map-order', page: 'docs/rules/kthena.md#other-differences (Map order)' },
  { id: 'bounded-refusal', page: 'docs/rules/kthena.md#other-differences (Long values)' },
] as const;
export type KthenaClass = (typeof KTHENA_DOCUMENTED)[number]['id'];

export interface Judged {
  differences: string[];
  /** The documented class that explains the differences, if one does. */
  documented?: KthenaClass;
  ours: Verdict;
  theirs: Verdict | { failed: string };
}

/** A field error about an entry of a map Kthena ranges over (roles, metricSources, minRoleReplicas, headers). */
const MAP_ENTRY =
  /^spec\.(disaggregatedTarget\.roles|template\.gangPolicy\.minRoleReplicas|rules\[\d+\]\.modelMatch\.headers)\b/;

/** A refusal's field errors, however its webhook joins them. */
function errorLines(message: string): string[] {
  return message
    .replace(/^[^:]*:/, '')
    .split(/\n? {2}- /)
    .filter((line) => line.trim() !== '');
}

function theirVerdict(answer: OracleAnswer, object: KubeObject | null): Verdict | { failed: string } {
  if (answer.panic !== undefined) return { failed: `panic: ${answer.panic}` };
  if (answer.status !== 200) return { failed: `HTTP ${answer.status}: ${answer.body.trim()}` };
  const body = JSON.parse(answer.body) as JsonObject & { response?: JsonObject & { patch?: string } };
  // Kthena answers an unchanged AutoscalingPolicy with the JSON patch `null` (kthena.md, divergence 4).
  if (
    body.response?.patch !== undefined &&
    Buffer.from(body.response.patch, 'base64').toString() === 'null'
  ) {
    delete body.response.patch;
  }
  const verdict = verdictOf(body, object);
  // Kthena's refusal carries no code; the API server makes it 400 (kthena.md, "Status code and reason").
  return !verdict.allowed && verdict.code === 200 ? { ...verdict, code: 400 } : verdict;
}

export function judge(path: string, review: JsonObject, ours: JsonObject, theirs: OracleAnswer): Judged {
  const object = ((review.request as JsonObject).object ?? null) as KubeObject | null;
  const our = verdictOf(ours, object);
  const their = theirVerdict(theirs, object);
  if ('failed' in their) {
    // Kthena's call fails; under failurePolicy Fail the API server refuses.
    const decodeRefused = theirs.status === 400 && /^failed to decode/.test(theirs.body);
    const documented: KthenaClass | undefined =
      !our.allowed && decodeRefused && /^failed to decode \w+:\n/.test(our.message)
        ? 'decode-refusal'
        : !our.allowed && theirs.panic !== undefined && path === '/validate/modelroute'
          ? 'nil-target-panic'
          : undefined;
    return { differences: ['call'], ...(documented ? { documented } : {}), ours: our, theirs: their };
  }
  const differences: string[] = [];
  if (our.allowed !== their.allowed) differences.push('allowed');
  if (!our.allowed && !their.allowed && our.code !== their.code) differences.push('code');
  if (our.message !== their.message) differences.push('message');
  if (!isDeepStrictEqual(our.warnings, their.warnings)) differences.push('warnings');
  if (our.allowed && !isDeepStrictEqual(our.after, their.after)) differences.push('object');
  let documented: KthenaClass | undefined;
  if (differences.length === 1 && differences[0] === 'message') {
    const mine = errorLines(our.message);
    const kthena = errorLines(their.message);
    const sameHeading = our.message.split(':')[0] === their.message.split(':')[0];
    // Only errors about entries of a map Go ranges over may move; the others keep their order.
    const fixed = (lines: string[]): string[] => lines.filter((line) => !MAP_ENTRY.test(line));
    if (
      sameHeading &&
      isDeepStrictEqual([...mine].sort(), [...kthena].sort()) &&
      isDeepStrictEqual(fixed(mine), fixed(kthena))
    ) {
      documented = 'map-order';
    }
    // A refusal is cut at 4,096 characters here; Kthena's is whole.
    const cut = /…\(\d+ more chars\)$/.exec(our.message);
    if (cut && their.message.startsWith(our.message.slice(0, cut.index))) documented = 'bounded-refusal';
  }
  return { differences, ...(documented ? { documented } : {}), ours: our, theirs: their };
}
