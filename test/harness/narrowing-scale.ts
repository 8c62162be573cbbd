/**
 * The state at the size the narrowed configurations are bounded for: 10,000 namespaces, each
 * with its own ElasticQuota (every one of them then governed by /validate-pod), and 1,000
 * ClusterColocationProfiles, each selecting its own pod label in namespaces of one of 50 teams,
 * a tenth of them namespace-only. Shared by the unit test of the bounds, the bench that measures
 * the bytes, and the integration test that has the API server validate what is written.
 */
import type { ColocationProfileView, ReachState } from '../../webhook/state.js';
import { NAMESPACE_NAME_LABEL } from '../../webhook/names.js';
import { quotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';
import { stateSnapshot } from './state.js';

export interface NarrowingScale {
  namespaces: number;
  profiles: number;
}

export const BOUNDED_SCALE: NarrowingScale = { namespaces: 10_000, profiles: 1_000 };

export const scaleNamespace = (index: number): string => `tenant-${String(index).padStart(5, '0')}`;

export function scaleProfile(index: number): ColocationProfileView {
  const namespaceOnly = index % 10 === 9;
  return {
    name: `profile-${String(index).padStart(4, '0')}`,
    annotations: {},
    spec: {
      namespaceSelector: { matchLabels: { 'example.com/team': `team-${index % 50}` } },
      ...(namespaceOnly ? {} : { selector: { matchLabels: { 'example.com/app': `app-${index}` } } }),
      qosClass: 'BE',
    },
  };
}

export function scaleState({ namespaces, profiles }: NarrowingScale): ReachState {
  return stateSnapshot({
    namespaces: Array.from({ length: namespaces }, (_, i) => ({
      name: scaleNamespace(i),
      labels: { [NAMESPACE_NAME_LABEL]: scaleNamespace(i), 'example.com/team': `team-${i % 60}` },
    })),
    elasticQuotas: Array.from({ length: namespaces }, (_, i) =>
      quotaView({
        metadata: { name: scaleNamespace(i), namespace: scaleNamespace(i) },
        spec: { max: { cpu: '10', memory: '20Gi' }, min: { cpu: '1' } },
      }),
    ),
    colocationProfiles: Array.from({ length: profiles }, (_, i) => scaleProfile(i)),
  });
}
