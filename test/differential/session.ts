/**
 * One comparison session: the oracle process and our webhooks, both holding the same world, and
 * the judgement of a review by both sides (also again under a changed input, for the
 * counterfactuals of classify.ts).
 */
import type { StateStore } from '../../operator/store/state-store.js';
import type { JsonObject, KubeObject } from '../../webhook/admission/types.js';
import type { Observed, Change } from './classify.js';
import { compareVerdicts, verdictOf, type Verdict } from './compare.js';
import type { OracleClient } from './oracle-client.js';
import type { OurWebhooks } from './ours.js';
import type { GeneratedReview } from './reviews.js';
import { text } from './vocabulary.js';
import { withChildRequests, type World } from './world.js';

/** Kinds the API server stores through their Go type (built-in): it sends them in Go's encoding. */
const BUILT_IN = new Set(['Pod', 'Node', 'ConfigMap']);

const RECOVERED_PANIC = /^panic: (.*) \[recovered\]$/s;
export class Session {
  private world: World = { objects: [] };
  private state: StateStore | undefined;

  constructor(
    private readonly oracle: OracleClient,
    private readonly ours: OurWebhooks,
  ) {}

  /** Both sides take `bare`; Koordinator's quotas also get the child-request our store implies. */
  async setWorld(bare: World): Promise<World> {
    const state = await this.ours.state(bare);
    const world = withChildRequests(bare, state);
    const set = await this.oracle.ask({ op: 'world', objects: world.objects });
    if (!set.ok) throw new Error(`the oracle refused the world: ${set.error ?? ''}`);
    this.world = world;
    this.state = state;
    return world;
  }

  /** An object through its Go type, as the API server stores it. */
  async canonical(object: KubeObject | null | undefined): Promise<JsonObject | null | undefined> {
    if (!object) return object;
    const answer = await this.oracle.ask({ op: 'canonical', object });
    if (answer.error !== undefined) {
      throw new Error(`the oracle cannot read ${text(object.kind)}: ${answer.error}`);
    }
    return answer.object;
  }

  /** The review as the API server sends it: built-in objects in their Go encoding. */
  async asSent(generated: GeneratedReview): Promise<GeneratedReview> {
    const request = { ...(generated.review.request as JsonObject) };
    for (const field of ['object', 'oldObject'] as const) {
      const object = request[field] as KubeObject | null;
      if (object && BUILT_IN.has(text(object.kind))) request[field] = (await this.canonical(object)) ?? null;
    }
    return { ...generated, review: { ...generated.review, request } };
  }

  private async theirs(path: string, review: JsonObject, object: KubeObject | null): Promise<Verdict> {
    const answer = await this.oracle.ask({ op: 'review', path, review });
    if (answer.error !== undefined) throw new Error(`the oracle failed on ${path}: ${answer.error}`);
    if (answer.panic === undefined) {
      const verdict = verdictOf(answer.body ?? {}, object);
      // From Koordinator v1.8.0's controller-runtime (v0.23) on, the webhook recovers a handler's
      // panic itself and answers 500 `panic: <what> [recovered]`: on the wire a refusal, under
      // either failure policy. Marked as the panic it is, so the classes about it still apply.
      const recovered = verdict.code === 500 ? RECOVERED_PANIC.exec(verdict.message) : null;
      return recovered ? { ...verdict, panic: recovered[1] } : verdict;
    }
    // The call fails; the API server applies the failure policy (Koordinator's is ours).
    const stack = answer.stack ? { stack: answer.stack } : {};
    return this.ours.entry(path).failurePolicy === 'Ignore'
      ? {
          allowed: true,
          code: 200,
          message: '',
          warnings: [],
          patch: [],
          after: object,
          panic: answer.panic,
          ...stack,
        }
      : {
          allowed: false,
          code: 500,
          message: `failed calling webhook: ${answer.panic}`,
          warnings: [],
          patch: [],
          panic: answer.panic,
          ...stack,
        };
  }

  /** Both sides' answers to a review, compared. */
  async judge(generated: GeneratedReview, where: string, enforcement = ''): Promise<Observed> {
    if (!this.state) throw new Error('no world set');
    const { path, review } = generated;
    const object = ((review.request as JsonObject).object ?? null) as KubeObject | null;
    const theirs = await this.theirs(path, review, object);
    const ours = verdictOf(this.ours.answer(path, review, this.state, enforcement), object);
    const patched = ours.patch.length > 0 || theirs.patch.length > 0;
    const canonicalOurs = patched ? await this.canonical(ours.after) : undefined;
    const canonicalTheirs = patched ? await this.canonical(theirs.after) : undefined;
    return {
      path,
      note: generated.note,
      review,
      world: this.world,
      where,
      ours,
      theirs,
      canonicalOurs,
      canonicalTheirs,
      ...compareVerdicts(ours, theirs, canonicalOurs, canonicalTheirs),
    };
  }

  /** The review judged again under `change`; the session's world is put back afterwards. */
  async rejudge(observed: Observed, change: Change): Promise<Observed> {
    const generated: GeneratedReview = {
      path: observed.path,
      note: observed.note,
      review: change.review ?? observed.review,
    };
    const where = `${observed.where ?? ''} (counterfactual)`;
    // The observation may come from a counterfactual world already: a change builds on it.
    const target = change.world ?? observed.world;
    const original = this.world;
    if (target !== original) await this.setWorld(target);
    try {
      return await this.judge(await this.asSent(generated), where, change.ourEnforcement);
    } finally {
      if (target !== original) await this.setWorld(original);
    }
  }
}
