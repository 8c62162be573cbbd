/**
 * The operator reads the real API server's /version at start and runs on it (the local control
 * plane is newer than the minimum); the same check refuses that very answer against a higher
 * minimum, naming both versions. Its watches list the way that server offers: a streaming list
 * where the WatchList feature is on, pages where it is not (1.30, the floor CI runs).
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
import { freshOperator, httpGet, logsMatching } from '../harness/operator.js';
import { serverStreamsLists, streamingListsOnByDefault } from '../harness/streaming-lists.js';

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

  it('lists with a streaming list where the server offers one, in pages where it refuses it', async (t) => {
    const kubeConfig = await clusterKubeConfig();
    const info = await kubeConfig.makeApiClient(VersionApi).getCode();
    const check = checkKubernetesVersion(info);
    assert.ok(check.verdict === 'supported', `the local API server's version reads: ${JSON.stringify(info)}`);
    const streams = await serverStreamsLists(kubeConfig);
    assert.equal(
      streams,
      streamingListsOnByDefault(check.version.minor),
      `Kubernetes ${info.gitVersion} ${streams ? 'serves' : 'refuses'} streaming lists, unlike its WatchList default`,
    );
    const mode = streams ? 'stream' : 'pages';
    const other = streams ? 'pages' : 'stream';

    const { operator } = await freshOperator(t);
    const metrics = (await httpGet(operator.metricsPort, '/metrics')).body;
    assert.match(metrics, new RegExp(`^admission_store_lists_total\\{kind="pods",mode="${mode}"\\} 1$`, 'm'));
    assert.doesNotMatch(
      metrics,
      new RegExp(`^admission_store_lists_total\\{kind="pods",mode="${other}"\\}`, 'm'),
    );
    const fallbacks = logsMatching(operator, /^the API server refuses streaming lists; listing in pages$/);
    if (streams) assert.deepEqual(fallbacks, [], 'no watch falls back to pages');
    else {
      assert.ok(
        fallbacks.some((line) => line.kind === 'pods'),
        `the pods' watch says it falls back to pages: ${JSON.stringify(fallbacks)}`,
      );
      assert.match(String(fallbacks[0]?.reason), /sendInitialEvents|WatchList/);
    }
  });
});
