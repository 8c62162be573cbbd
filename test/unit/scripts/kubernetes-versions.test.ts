/**
 * The Kubernetes releases the local cluster builds: how one is chosen, the Go module a release
 * builds from, what is said of newer releases, and that the tested releases, the operator's
 * minimum, the chart and the compatibility table agree.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { MINIMUM_KUBERNETES } from '../../../operator/kubernetes-version.js';
import { committedModuleDir, kubernetesModuleGoMod } from '../../../scripts/cluster/kubernetes-module.js';
import { releaseUpdates } from '../../../scripts/cluster/kubernetes-updates.js';
import {
  CLUSTER_INSTANCE_ENV,
  defaultRelease,
  KUBERNETES_VERSION_ENV,
  parseRelease,
  selectedInstance,
  selectedRelease,
  takeKubernetesOption,
  testedReleases,
} from '../../../scripts/cluster/kubernetes-versions.js';
import { repoRoot } from '../../../scripts/cluster/layout.js';

describe('choosing the Kubernetes release', () => {
  it('takes --kubernetes=<version> into the environment the run passes on, and leaves the rest', () => {
    const env: NodeJS.ProcessEnv = {};
    assert.deepEqual(takeKubernetesOption(['up', '--kubernetes=1.30.14', '--node'], env), ['up', '--node']);
    assert.equal(env[KUBERNETES_VERSION_ENV], 'v1.30.14');
    assert.equal(selectedRelease(env), 'v1.30.14');
    assert.deepEqual(takeKubernetesOption(['integration', '--kubernetes=v1.37.2'], env), ['integration']);
    assert.equal(env[KUBERNETES_VERSION_ENV], 'v1.37.2');
  });

  it('chooses the first cluster of the release unless $CLUSTER_INSTANCE names another, 1 to 9', () => {
    assert.equal(selectedInstance({}), 1);
    assert.equal(selectedInstance({ [CLUSTER_INSTANCE_ENV]: '' }), 1);
    assert.equal(selectedInstance({ [CLUSTER_INSTANCE_ENV]: '2' }), 2);
    for (const value of ['0', '10', 'two', '-1', '1.5'])
      assert.throws(
        () => selectedInstance({ [CLUSTER_INSTANCE_ENV]: value }),
        /CLUSTER_INSTANCE=.* must be a number from 1 to 9/,
      );
  });

  it('defaults to the newest tested release', () => {
    assert.equal(selectedRelease({}), defaultRelease());
    assert.equal(selectedRelease({ [KUBERNETES_VERSION_ENV]: '' }), defaultRelease());
    assert.equal(defaultRelease(), testedReleases().at(-1));
  });

  it('refuses anything but a release, naming the option or the variable', () => {
    assert.throws(
      () => takeKubernetesOption(['--kubernetes=1.30'], {}),
      /^Error: --kubernetes=1\.30: name a Kubernetes release as 1\.30\.14$/,
    );
    assert.throws(() => takeKubernetesOption(['--kubernetes=latest'], {}), /--kubernetes=latest/);
    assert.throws(
      () => takeKubernetesOption([], { [KUBERNETES_VERSION_ENV]: 'v1.37.0-rc.1' }),
      /^Error: CLUSTER_KUBERNETES_VERSION=v1\.37\.0-rc\.1 \(or --kubernetes\) must name a Kubernetes release as 1\.30\.14$/,
    );
    assert.equal(parseRelease('1.30'), undefined);
    assert.deepEqual(parseRelease('v1.30.14'), { major: 1, minor: 30, patch: 14 });
  });
});

describe('a release’s Go module', () => {
  const kubernetesGoMod = [
    'module k8s.io/kubernetes',
    '',
    'go 1.26.0',
    '',
    'godebug default=go1.26',
    '',
    'require (',
    '\tgo.etcd.io/etcd/server/v3 v3.7.0 // indirect',
    '\tk8s.io/api v0.0.0',
    ')',
    '',
    'replace (',
    '\tk8s.io/client-go => ./staging/src/k8s.io/client-go',
    '\tk8s.io/api => ./staging/src/k8s.io/api',
    ')',
    '',
  ].join('\n');

  it('requires k8s.io/kubernetes, replaces its staging modules with their published versions, keeps its Go version', () => {
    assert.equal(
      kubernetesModuleGoMod('v1.37.2', kubernetesGoMod),
      [
        'module github.com/admission-operator/admission-operator/scripts/cluster/kubernetes',
        '',
        'go 1.26.0',
        '',
        'godebug default=go1.26',
        '',
        'require k8s.io/kubernetes v1.37.2',
        '',
        'replace (',
        '\tk8s.io/api => k8s.io/api v0.37.2',
        '\tk8s.io/client-go => k8s.io/client-go v0.37.2',
        ')',
        '',
      ].join('\n'),
    );
  });

  it('is committed for each tested release, as generated: the release, its Go version, every staging module at v0.<minor>.<patch>', () => {
    const releases = testedReleases();
    assert.ok(releases.length >= 2, `tested releases: ${releases.join(', ')}`);
    for (const release of releases) {
      const goMod = readFileSync(join(committedModuleDir(release), 'go.mod'), 'utf8');
      const { minor, patch } = parseRelease(release)!;
      assert.match(
        goMod,
        new RegExp(`^\\tk8s\\.io/kubernetes ${release.replaceAll('.', '\\.')}$`, 'm'),
        release,
      );
      assert.match(goMod, /^go \d+\.\d+(\.\d+)?$/m, release);
      const replaced = [...goMod.matchAll(/^\t(k8s\.io\/[\w.-]+) => (\S+) (\S+)$/gm)];
      assert.ok(replaced.length > 20, `${release} replaces ${replaced.length} staging modules`);
      for (const [, from, to, version] of replaced) {
        assert.equal(to, from, `${release}: ${from} is replaced by itself, published`);
        assert.equal(version, `v0.${minor}.${patch}`, `${release}: ${from}`);
      }
      assert.match(
        readFileSync(join(committedModuleDir(release), 'go.sum'), 'utf8'),
        /^k8s\.io\/kubernetes /m,
      );
    }
  });
});

describe('what is said of newer releases', () => {
  const tested = ['v1.30.14', 'v1.37.2'];

  it('names a newer patch of a tested minor and a newer minor, ignoring pre-releases', () => {
    assert.deepEqual(
      releaseUpdates(tested, ['v1.30.13', 'v1.30.14', 'v1.37.1', 'v1.37.2', 'v1.38.0-alpha.1']),
      ['the tested Kubernetes releases are the newest patches the Go module proxy has'],
    );
    const lines = releaseUpdates(tested, ['v1.30.15', 'v1.37.2', 'v1.37.3', 'v1.38.0']);
    assert.equal(lines.length, 3);
    assert.match(
      lines[0] ?? '',
      /^warning: Kubernetes v1\.30\.15 is out, newer than the tested v1\.30\.14: /,
    );
    assert.match(lines[1] ?? '', /^warning: Kubernetes v1\.37\.3 is out, newer than the tested v1\.37\.2: /);
    assert.match(
      lines[2] ?? '',
      /^warning: Kubernetes v1\.38\.0 is out, a newer minor than the newest tested v1\.37\.2/,
    );
  });
});

describe('the tested releases, the operator and the chart', () => {
  it('test the operator’s minimum as their floor', () => {
    const floor = parseRelease(testedReleases()[0] ?? '');
    assert.deepEqual(
      { major: floor?.major, minor: floor?.minor },
      { major: MINIMUM_KUBERNETES.major, minor: MINIMUM_KUBERNETES.minor },
    );
    const chart = parse(
      readFileSync(join(repoRoot, 'charts', 'admission-operator', 'Chart.yaml'), 'utf8'),
    ) as {
      kubeVersion?: string;
    };
    assert.equal(chart.kubeVersion, `>=${MINIMUM_KUBERNETES.major}.${MINIMUM_KUBERNETES.minor}.0-0`);
  });

  it('are each named in the compatibility table, and the README says which', () => {
    const table = readFileSync(join(repoRoot, 'docs', 'kubernetes-versions.md'), 'utf8');
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    for (const release of testedReleases()) {
      const shown = release.slice(1);
      assert.ok(
        table.includes(`**${shown}**`),
        `docs/kubernetes-versions.md names the tested ${shown} in bold`,
      );
      assert.ok(readme.includes(shown), `README.md names the tested ${shown}`);
    }
  });
});
