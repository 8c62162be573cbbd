import assert from 'node:assert/strict';
import { test } from 'node:test';
import { profileCandidates } from '../../../../operator/store/indexes.js';
import type { JsonObject, JsonValue, KubeObject } from '../../../../webhook/admission/types.js';
import { applyProfilesToPod } from '../../../../webhook/rules/koordinator/colocation/apply-profiles-to-pod.js';
import { CopyOnWrite } from '../../../../webhook/util/copy-on-write.js';
import {
  profileMatches,
  ProfileProblem,
} from '../../../../webhook/rules/koordinator/colocation/colocation-profile.js';
import type { ColocationProfileView, StateSnapshot } from '../../../../webhook/state.js';
import { mulberry32, type Rng } from '../../../fuzz/prng.js';
import { stateSnapshot } from '../../../harness/state.js';

const KEYS = ['app', 'team', 'tier', 'kubernetes.io/metadata.name', '__proto__'];
const VALUES = ['a', 'b', 'c', 'default', ''];

function labels(rng: Rng): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of KEYS)
    if (rng.chance(0.5)) Object.defineProperty(out, key, { value: rng.pick(VALUES), enumerable: true });
  return out;
}

function values(rng: Rng): string[] {
  return Array.from({ length: rng.range(0, 3) }, () => rng.pick(VALUES));
}

/** A selector as a user may write it, now and then one the API server's schema lets through but that does not parse. */
function selector(rng: Rng): JsonValue | undefined {
  switch (rng.int(8)) {
    case 0:
      return undefined;
    case 1:
      return {};
    case 2:
      return rng.chance(0.5) ? 'not a selector' : { matchLabels: { app: 1 } };
    default: {
      const out: JsonObject = {};
      if (rng.chance(0.6)) out.matchLabels = labels(rng);
      if (rng.chance(0.6)) {
        out.matchExpressions = Array.from({ length: rng.range(1, 3) }, () => {
          const operator = rng.pick(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Bogus']);
          const needs = operator === 'In' || operator === 'NotIn';
          return {
            key: rng.pick(KEYS),
            operator,
            ...(needs || rng.chance(0.1) ? { values: values(rng) } : {}),
          };
        });
      }
      return out;
    }
  }
}

function profiles(rng: Rng): ColocationProfileView[] {
  return Array.from({ length: rng.range(0, 40) }, (_, i) => {
    const spec: JsonObject = { labels: { [`applied-${i}`]: 'yes' } };
    const podSelector = selector(rng);
    const namespaceSelector = selector(rng);
    if (podSelector !== undefined) spec.selector = podSelector;
    if (namespaceSelector !== undefined) spec.namespaceSelector = namespaceSelector;
    return { name: `p-${String(rng.int(1000)).padStart(3, '0')}-${i}`, annotations: {}, spec };
  });
}

function pod(podLabels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: podLabels },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  };
}

test('the candidates of a pod include, in order, every profile that matches it or reports a problem', () => {
  // Both must happen for the comparison to say anything: profiles that match, and lists narrowed.
  let matched = 0;
  let narrowed = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const rng = mulberry32(seed);
    const all = profiles(rng).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const index = profileCandidates(all);
    for (let i = 0; i < 20; i++) {
      const podLabels = labels(rng);
      const namespaceLabels = labels(rng);
      const candidates = index.candidates(podLabels, namespaceLabels);
      const needed = all.filter((profile) => {
        try {
          return profileMatches(profile, podLabels, namespaceLabels);
        } catch (error) {
          if (error instanceof ProfileProblem) return true;
          throw error;
        }
      });
      const candidateSet = new Set(candidates);
      matched += needed.length;
      if (candidates.length < all.length) narrowed++;
      for (const profile of needed)
        assert.ok(candidateSet.has(profile), `seed ${seed}: ${profile.name} missing`);
      assert.deepEqual(
        candidates,
        all.filter((profile) => candidateSet.has(profile)),
        `seed ${seed}: order`,
      );
    }
  }
  assert.ok(matched > 1000, `only ${matched} profiles matched`);
  assert.ok(narrowed > 1000, `only ${narrowed} candidate lists were narrower than all profiles`);
});

test('/mutate-pod applies the same profiles with the index as with a scan of every profile', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rng = mulberry32(1000 + seed);
    const fixture = {
      namespaces: [{ name: 'ns', labels: labels(rng) }],
      colocationProfiles: profiles(rng),
    };
    const indexed = stateSnapshot(fixture);
    const scanned: StateSnapshot = {
      ...indexed,
      colocationProfileCandidates: () => indexed.colocationProfiles(),
    };
    for (let i = 0; i < 10; i++) {
      const subject = pod(labels(rng));
      const options = { roll: () => 0, skipMutatingResources: false };
      const apply = (state: StateSnapshot): unknown => {
        const draft = new CopyOnWrite(subject);
        return { ...applyProfilesToPod(draft, 'ns', state, options), pod: draft.current };
      };
      assert.deepEqual(apply(indexed), apply(scanned), `seed ${seed}`);
    }
  }
});

test('a pod is matched against only the profiles filed under its labels', () => {
  const all = Array.from({ length: 100 }, (_, i) => ({
    name: `p-${String(i).padStart(3, '0')}`,
    annotations: {},
    spec: { selector: { matchLabels: { app: `app-${i}` } } },
  }));
  const index = profileCandidates(all);
  assert.deepEqual(
    index.candidates({ app: 'app-7' }, {}).map((profile) => profile.name),
    ['p-007'],
  );
  assert.deepEqual(index.candidates({ app: 'other' }, {}), []);
});

test('a profile selecting by namespace alone is filed under the namespace label it requires', () => {
  const byNamespace = {
    name: 'by-namespace',
    annotations: {},
    spec: {
      namespaceSelector: { matchLabels: { team: 'a' } },
      selector: { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
    },
  };
  const everywhere = { name: 'everywhere', annotations: {}, spec: {} };
  const index = profileCandidates([byNamespace, everywhere]);
  assert.deepEqual(index.candidates({ x: '1' }, { team: 'b' }), [everywhere]);
  assert.deepEqual(index.candidates({ x: '1' }, { team: 'a' }), [byNamespace, everywhere]);
});
