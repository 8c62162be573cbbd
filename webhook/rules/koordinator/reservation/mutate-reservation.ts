/**
 * /mutate-reservation (docs/rules/mutate-reservation.md;
 * cluster_colocation_profile.go): new Reservations get the ClusterColocationProfiles whose
 * selector matches their labels, the same way pods do, except that namespaceSelector is ignored
 * (Reservations are cluster-scoped), the scheduler name and priority go into the pod template,
 * and resources are never translated.
 *
 * Beyond Koordinator, a Reservation with neither spec.ttl nor spec.expires gets spec.ttl "24h":
 * the default Koordinator's CRD declares (`+kubebuilder:default="24h"`), which its scheduler
 * relies on to expire reservations. Setting it here makes the default visible even where the
 * installed CRD carries no default, and leaves a Reservation that sets spec.expires alone, since
 * the two are exclusive.
 */
import { allow, mutate } from '../../../admission/decisions.js';
import type { KubeObject } from '../../../admission/types.js';
import type { Rule } from '../../../state.js';
import { asObject, labelsOf } from '../../../util/json.js';
import { embedPodSchema, POD_PATCH_SCHEMA } from '../../../util/strategic-merge-patch.js';
import {
  applyProfile,
  probabilityPercent,
  profileApplies,
  profileMatches,
  profileAudit,
  ProfileProblem,
  type ProfileTarget,
} from '../colocation/colocation-profile.js';

const DEFAULT_RESERVATION_TTL = '24h';

const RESERVATION_TARGET: ProfileTarget = {
  podSpecPath: ['spec', 'template', 'spec'],
  podSpecOptional: true,
  patchSchema: embedPodSchema(POD_PATCH_SCHEMA, ['spec', 'template']),
};

export function reservationMutator(roll: () => number): Rule {
  return (request, state) => {
    if (request.operation !== 'CREATE' || !request.object) return allow();
    const warnings: string[] = [];
    const applied: string[] = [];
    // Each step copies only what it changes, so the result shares everything else with the
    // request object, which is never written: the server diffs the two, skipping shared subtrees.
    let reservation: KubeObject = request.object;
    const labels = labelsOf(reservation);
    for (const profile of state.colocationProfiles()) {
      try {
        if (!profileMatches(profile, labels, undefined)) continue;
        if (!profileApplies(probabilityPercent(profile), roll)) continue;
        reservation = applyProfile(reservation, profile, RESERVATION_TARGET, state) as KubeObject;
        applied.push(profile.name);
      } catch (error) {
        if (!(error instanceof ProfileProblem)) throw error;
        warnings.push(error.message);
      }
    }
    const spec = asObject(reservation.spec);
    if (spec && (spec.ttl ?? null) === null && (spec.expires ?? null) === null)
      reservation = { ...reservation, spec: { ...spec, ttl: DEFAULT_RESERVATION_TTL } };
    const decision = mutate(reservation, warnings.length > 0 ? warnings : undefined);
    const audit = profileAudit(applied, warnings);
    return audit ? { ...decision, audit } : decision;
  };
}
