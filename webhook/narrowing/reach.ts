/**
 * A webhook's reach: the reviews it could refuse, change, warn about or reserve quota for, given
 * the state. Each narrowed webhook of the table says its reach in a function beside its rule (e.g.
 * rules/koordinator/pod/validate-pod-reach.ts); narrow-webhooks.ts turns it into the selectors and
 * match conditions the API server evaluates, so that a review outside the reach is never sent and
 * never waits on us. A reach must over-approximate: a review it leaves out is one the webhook
 * answers with a plain "allowed" (no patch, no warning, no reservation), as test/fuzz/blast-radius
 * checks over generated states and reviews.
 */
import type { Operation } from '../admission/types.js';
import type { LabelSelector } from '../util/label-selector.js';

/** One way a webhook could act on a review: every part given must hold; a term with no part holds always. */
export interface ReachTerm {
  /** Only on these operations; on every operation when absent. */
  operations?: readonly Operation[];
  /**
   * A CEL condition over `object`, `oldObject` and `request` that never errs on a review the API
   * server can send (every optional field is tested with has() before it is read).
   */
  cel?: string;
  /**
   * The object's labels match this selector. Kept apart from `cel` because it is the part there
   * may be a thousand of (one per ClusterColocationProfile): narrowing coarsens it when the
   * condition would grow past its bound.
   */
  labels?: LabelSelector;
}

/** Namespaces by name, or by a selector over their labels (as the API server reads them). */
export type NamespaceSet = { names: readonly string[] } | { selector: LabelSelector };

/** Where each term applies. */
export interface Reach {
  /** Terms that hold in any namespace. */
  anywhere: ReachTerm[];
  /** Terms that hold only for reviews in these namespaces. */
  within: { namespaces: NamespaceSet; terms: ReachTerm[] }[];
}

/** Every review: the webhook is not narrowed. */
export const EVERY_REVIEW: ReachTerm = {};

/** True when the term holds for every review. */
export const holdsAlways = (term: ReachTerm): boolean =>
  term.operations === undefined && term.cel === undefined && term.labels === undefined;
