/**
 * The README, followed as a new user would, on the local cluster's node: its blocks run in order
 * with bash, kubectl and helm (the image built and imported first, as the README's install
 * assumes it was pushed): install in warn, caller verification with the local API server's client
 * certificate, the first admitted and refused pods, deny, the
 * run-time enforcement, the audit, the Lease, one example of each rule family, uninstall.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { buildAndLoadImage, imageRepository } from '../../scripts/image/deploy-local.js';
import { clusterKubeConfig, kubectl, waitFor, webhookClient } from '../harness/cluster.js';
import { runReadmeBlock } from '../harness/readme.js';

const log = (line: string): void => {
  console.error(`[e2e readme] ${line}`);
};

/** Namespaces the README's blocks create. */
const README_NAMESPACES = ['team-a', 'koordinator-system'];

async function deleteReadmeNamespaces(): Promise<void> {
  await kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=true', ...README_NAMESPACES]);
}

describe('the README on a real node', () => {
  let imageTag = '';

  before(async () => {
    await deleteReadmeNamespaces();
    imageTag = await buildAndLoadImage(log);
  });
  after(async () => {
    await runReadmeBlock('uninstall');
    await deleteReadmeNamespaces();
  });

  it('install: helm install in warn, and the rollout finishes', async () => {
    const { code, output } = await runReadmeBlock('install', {
      IMAGE_REPOSITORY: imageRepository,
      IMAGE_TAG: imageTag,
    });
    assert.equal(code, 0, output);
    assert.match(output, /deployment "admission-operator" successfully rolled out/);
  });

  it('verify: the operator answers only the API server, by the client certificate it presents', async () => {
    const client = await webhookClient();
    const { code, output } = await runReadmeBlock('verify', { WEBHOOK_CLIENT_CA: client.caFile });
    assert.equal(code, 0, output);
    assert.match(output, /deployment "admission-operator" successfully rolled out/);
  });

  it('the first pods: the GPU pod gets its class, the pod past its quota is admitted with a warning', async () => {
    const { code, output } = await runReadmeBlock('first-pods');
    assert.equal(code, 0, output);
    assert.match(output, /\{"gpu\.nvidia\.com\/class":"h100"\}/);
    assert.match(
      output,
      /Warning: validate-pod would refuse this \(enforcement warn\): spec\.containers\[\*\]\.resources\.requests: exceeded quota: team-a\/team-a, requested: cpu=2, used: cpu=1, limited: cpu=2/,
    );
    assert.match(output, /pod\/big created/);
  });

  it('deny, at run time: the next pod past the quota is refused with the message of Koordinator', async () => {
    const { code, output } = await runReadmeBlock('deny');
    assert.notEqual(code, 0, output);
    assert.match(
      output,
      /admission webhook "validate-pod\.admission-operator\.io" denied the request: spec\.containers\[\*\]\.resources\.requests: exceeded quota: team-a\/team-a, requested: cpu=2, used: cpu=3, limited: cpu=2/,
    );
  });

  it('enforcement at run time: a new setting in the ConfigMap is accepted', async () => {
    const { code, output } = await runReadmeBlock('enforcement');
    assert.equal(code, 0, output);
    assert.match(output, /configmap\/admission-operator configured/);
  });

  it('audit: the pods past their quota are listed as would-be refusals', async () => {
    const { output } = await runReadmeBlock('audit');
    assert.match(output, /would be refused/);
    assert.match(
      output,
      /Pod team-a\/big: spec\.containers\[\*\]\.resources\.requests: exceeded quota: team-a\/team-a/,
    );
  });

  it('policy reports: the chart installs their CRDs, audit --policy-report publishes the namespace report', async () => {
    const { output } = await runReadmeBlock('policy-report');
    // PASS, then FAIL: the pods past the quota fail.
    assert.match(output, /^admission-operator-audit\s+\d+\s+[1-9]\d*\s+/m);
  });

  it('the Lease names the leader', async () => {
    const { code, output } = await runReadmeBlock('lease');
    assert.equal(code, 0, output);
    assert.match(output, /^admission-operator\s+admission-operator-\S+/m);
  });

  it('one example of each rule family is refused with its message', async () => {
    const expected: [id: string, message: RegExp][] = [
      ['quota-tree', /team-a-batch has parentName team-a but the parentQuotaInfo's IsParent is false/],
      ['colocation', /must specify koordinator QoS BE with koordinator colocation resources/],
      ['nodes', /resource-amplification-ratio\]\.cpu: ratio 0\.5 must be at least 1/],
      ['slo-config', /clusterStrategy\.cpuSuppressThresholdPercent: Invalid value: 120: must be at most 100/],
      [
        'models',
        /spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/,
      ],
    ];
    for (const [id, message] of expected) {
      const { code, output } = await runReadmeBlock(id);
      assert.notEqual(code, 0, `${id}: ${output}`);
      assert.match(output, /denied the request/, `${id}: ${output}`);
      assert.match(output, message, `${id}: ${output}`);
    }
  });

  it('uninstall: no webhook configuration is left', async () => {
    const { code, output } = await runReadmeBlock('uninstall');
    assert.equal(code, 0, output);
    assert.match(output, /release "admission-operator" uninstalled/);
    // The garbage collector removes them once the chart's ClusterRole, their owner, is gone.
    const admission = (await clusterKubeConfig()).makeApiClient(AdmissionregistrationV1Api);
    await waitFor(
      'both admission-operator webhook configurations to be gone',
      async () => {
        const mutating = await admission.listMutatingWebhookConfiguration();
        const validating = await admission.listValidatingWebhookConfiguration();
        return ![...mutating.items, ...validating.items].some(
          (c) => c.metadata?.name === 'admission-operator',
        );
      },
      { timeoutMs: 60_000 },
    );
  });
});
