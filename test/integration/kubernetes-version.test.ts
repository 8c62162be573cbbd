/**
 * The operator reads the real API server's /version at start and runs on it (the local control
 * plane is newer than the minimum); the same check refuses that very answer against a higher
 * minimum, naming both versions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VersionApi } from '@kubernetes/client-node';
import {
  checkKubernetesVersion,
  formatVersion,
  MINIMUM_KUBERNETES,
} from '../../operator/kubernetes-version.js';
import { clusterKubeConfig, waitFor } from '../harness/cluster.js';
import { freshOperator, logsMatching } from '../harness/operator.js';

describe('the Kubernetes version at start', () => {
  it('logs the server’s version and the minimum, then runs', async (t) => {
    const info = await (await clusterKubeConfig()).makeApiClient(VersionApi).getCode();
    const check = checkKubernetesVersion(info);
    assert.ok(check.verdict === 'supported', `the local API server's version reads: ${JSON.stringify(info)}`);
    const server = check.version;
    const { operator } = await freshOperator(t);
    const [line] = await waitFor('the version log line', () => {
      const lines = logsMatching(operator, /^Kubernetes version supported$/);
      return Promise.resolve(lines.length > 0 ? lines : undefined);
    });
    assert.equal(line?.kubernetes, info.gitVersion);
    assert.equal(line?.minimum, formatVersion(MINIMUM_KUBERNETES));
    const order = operator.logs.map((text) => /"msg":"([^"]*)"/.exec(text)?.[1]);
    assert.ok(
      order.indexOf('Kubernetes version supported') < order.indexOf('operator running'),
      'the version is checked before the operator runs',
    );
    assert.equal(operator.child.exitCode, null, 'still running');

    const above = { major: server.major, minor: server.minor + 1 };
    const refused = checkKubernetesVersion(info, above);
    assert.equal(refused.verdict, 'too-old');
    assert.match(
      refused.verdict === 'too-old' ? refused.message : '',
      new RegExp(
        `^Kubernetes ${info.gitVersion.replaceAll('.', '\\.')} is older than ${formatVersion(above).replaceAll('.', '\\.')},`,
      ),
    );
  });
});
