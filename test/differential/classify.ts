/**
 * How an observed difference is matched to the documented ones (expected.ts). A documented
 * difference explains its part of a difference in one of two ways:
 *
 *   reconcile       it rewrites the two answers where it applies (our message without the field
 *                   path in front, Koordinator's JSON error read as our sentence, ...): what it
 *                   does not touch must still agree;
 *   counterfactual  it names a change of the input that removes its cause (the profile it is
 *                   about, our colocation step in warn, Koordinator asked again), and both sides
 *                   are judged again with it: that answer must agree, or be explained in turn.
 *
 * A review is documented when the differences left after every reconcile are none, or when one
 * counterfactual's judgement is documented; its classes are the ids that took part. Anything else
 * is an undocumented difference and fails the run.
 */
import type { JsonObject } from '../../webhook/admission/types.js';
import { compareVerdicts, type Aspect, type Verdict } from './compare.js';
import type { World } from './world.js';

/** Two answers and the objects each side's patch leads to, as the API server would store them. */
export interface Pair {
  ours: Verdict;
  theirs: Verdict;
  canonicalOurs?: JsonObject | null | undefined;
  canonicalTheirs?: JsonObject | null | undefined;
}

/** One review's two answers and how they differ. */
export interface Observed extends Pair {
  path: string;
  note: string;
  review: JsonObject;
  world: World;
  differences: Aspect[];
  representationOnly: boolean;
  where?: string;
}

/** A change of the input under which a documented difference has no cause. */
export interface Change {
  world?: World;
  review?: JsonObject;
  /** Our enforcement text for the new judgement (e.g. `validate-pod/colocation=warn`). */
  ourEnforcement?: string;
  /** Judge this many times and keep a judgement that is documented (Koordinator iterates Go maps). */
  theirRepeats?: number;
}

export interface DocumentedDifference {
  id: string;
  /** The Koordinator releases it is documented against (oracle-build.ts); every one when absent. */
  releases?: readonly string[];
  /** The rule page (docs/rules/) that says what we do instead, why, and Koordinator's code line. */
  page: string;
  reconcile?(pair: Pair, observed: Observed): Pair | undefined;
  counterfactual?(observed: Observed): Change | undefined;
}

export type Rejudge = (observed: Observed, change: Change) => Promise<Observed>;

export const agree = (pair: Pair): boolean =>
  compareVerdicts(pair.ours, pair.theirs, pair.canonicalOurs, pair.canonicalTheirs).differences.length === 0;

/** The ids of the documented differences that explain `observed`, or undefined when none do. */
export async function classify(
  observed: Observed,
  documented: readonly DocumentedDifference[],
  rejudge: Rejudge,
  excluded: ReadonlySet<string> = new Set(),
): Promise<string[] | undefined> {
  let pair: Pair = observed;
  const applied: string[] = [];
  // Two passes: one reconcile can uncover what another one explains.
  for (let pass = 0; pass < 2; pass++) {
    for (const difference of documented) {
      if (excluded.has(difference.id) || !difference.reconcile) continue;
      const reconciled = difference.reconcile(pair, observed);
      if (!reconciled) continue;
      pair = reconciled;
      if (!applied.includes(difference.id)) applied.push(difference.id);
    }
  }
  if (agree(pair)) return applied;
  for (const difference of documented) {
    if (excluded.has(difference.id) || !difference.counterfactual) continue;
    const change = difference.counterfactual(observed);
    if (!change) continue;
    for (let attempt = 0; attempt < (change.theirRepeats ?? 1); attempt++) {
      const again = await rejudge(observed, change);
      if (again.differences.length === 0) return [difference.id];
      const rest = await classify(again, documented, rejudge, new Set([...excluded, difference.id]));
      if (rest) return [difference.id, ...rest];
    }
  }
  return undefined;
}
