/**
 * Every documented difference between our webhooks and Koordinator's, as a classifier: a
 * difference observed by the suite is expected only when one of these explains it, and each
 * names the rule page (docs/rules/) that says what we do instead and why.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import type { Aspect, Verdict } from './compare.js';
import type { World } from './world.js';

/** One review's two answers and how they differ. */
export interface Observed {
  path: string;
  note: string;
  review: JsonObject;
  ours: Verdict;
  theirs: Verdict;
  differences: Aspect[];
  representationOnly: boolean;
  where?: string;
}

export interface DocumentedDifference {
  id: string;
  /** The rule page that documents it. */
  page: string;
  explains(observed: Observed, world: World): boolean;
}

export const DOCUMENTED: readonly DocumentedDifference[] = [];

/** The id of the documented difference that explains `observed`, if any. */
export function classify(observed: Observed, world: World): string | undefined {
  return DOCUMENTED.find((difference) => difference.explains(observed, world))?.id;
}
