import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import {
  checkKubernetesVersion,
  MINIMUM_KUBERNETES,
  type KubernetesVersion,
  type ServerVersionInfo,
} from '../../../operator/kubernetes-version.js';

/** The version the check reads from /version's answer (against a minimum every version meets). */
function versionRead(info: ServerVersionInfo): KubernetesVersion | undefined {
  const check = checkKubernetesVersion(info, { major: 0, minor: 0 });
  assert.notEqual(check.verdict, 'too-old');
  return check.verdict === 'supported' ? check.version : undefined;
}

describe('the Kubernetes version check', () => {
  it('reads major and minor from the gitVersions distributions report, else from major and minor', () => {
    assert.deepEqual(versionRead({ gitVersion: 'v1.29.3' }), { major: 1, minor: 29 });
    assert.deepEqual(versionRead({ gitVersion: 'v1.30.0-gke.1' }), { major: 1, minor: 30 });
    assert.deepEqual(versionRead({ gitVersion: 'v1.31.2-eks-7f9249a' }), { major: 1, minor: 31 });
    assert.deepEqual(versionRead({ gitVersion: 'v1.31+' }), { major: 1, minor: 31 });
    assert.deepEqual(versionRead({ gitVersion: 'v1.32.1+k3s1' }), { major: 1, minor: 32 });
    assert.deepEqual(versionRead({ gitVersion: 'v2.0.0' }), { major: 2, minor: 0 });
    assert.deepEqual(versionRead({ gitVersion: 'custom', major: '1', minor: '33+' }), {
      major: 1,
      minor: 33,
    });
    assert.equal(versionRead({ gitVersion: 'v1.3x' }), undefined);
    assert.equal(versionRead({}), undefined);
  });

  it('refuses a server older than the minimum, naming both versions, and admits the minimum and later', () => {
    const old = checkKubernetesVersion({ gitVersion: 'v1.29.3', major: '1', minor: '29' });
    assert.equal(old.verdict, 'too-old');
    assert.match(old.verdict === 'too-old' ? old.message : '', /Kubernetes v1\.29\.3 is older than v1\.30,/);
    assert.equal(checkKubernetesVersion({ gitVersion: 'v1.30.0-gke.1' }).verdict, 'supported');
    assert.equal(checkKubernetesVersion({ gitVersion: 'v1.31+' }).verdict, 'supported');
    assert.equal(checkKubernetesVersion({ gitVersion: 'v1.35.4' }).verdict, 'supported');
    assert.equal(checkKubernetesVersion({ gitVersion: 'v2.0.0' }).verdict, 'supported');
    assert.equal(checkKubernetesVersion({ gitVersion: 'v0.99.0' }).verdict, 'too-old');
    // Minor 9 is older than 30: compared as numbers, not as text.
    assert.equal(
      checkKubernetesVersion({ gitVersion: 'v1.9.0' }, { major: 1, minor: 30 }).verdict,
      'too-old',
    );
  });

  it('does not refuse a version it cannot read, and bounds what it shows of it', () => {
    const check = checkKubernetesVersion({ gitVersion: `weird-${'x'.repeat(500)}` });
    assert.equal(check.verdict, 'unknown');
    assert.ok(check.verdict === 'unknown' && check.shown.length <= 64);
  });

  it('has the minimum the chart’s kubeVersion states', () => {
    const chart = parse(
      readFileSync(join(repoRoot, 'charts', 'admission-operator', 'Chart.yaml'), 'utf8'),
    ) as { kubeVersion?: string };
    // -0 lets pre-release and vendor builds (v1.30.0-gke.1) satisfy the constraint in Helm.
    assert.equal(chart.kubeVersion, `>=${MINIMUM_KUBERNETES.major}.${MINIMUM_KUBERNETES.minor}.0-0`);
  });
});
