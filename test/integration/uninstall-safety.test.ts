/**
 * Deleting the owner ClusterRole (what `helm uninstall` does) must leave no webhook
 * configuration behind: one pointing at a deleted Service with failurePolicy Fail would block
 * the cluster. The garbage collector of the real controller manager removes them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionregistrationV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { clusterKubeConfig, statusCode, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { CONFIGURATION_NAME, freshOperator, readSecret } from '../harness/operator.js';

describe('uninstall safety', () => {
  it('lets the garbage collector remove both configurations and the Secret once their owner ClusterRole is deleted', async (t) => {
    const kc = await clusterKubeConfig();
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    const roleName = `admission-operator-test-${uniqueSuffix()}`;
    const role = await rbac.createClusterRole({ body: { metadata: { name: roleName }, rules: [] } });
    t.after(async () => {
      await rbac.deleteClusterRole({ name: roleName }).catch(() => undefined);
    });

    const { operator, namespace } = await freshOperator(t, { args: [`--owner-cluster-role=${roleName}`] });
    const secretOwners = await waitFor('the Secret to be owned', async () => {
      const references = (await readSecret(namespace))?.metadata?.ownerReferences;
      return references && references.length > 0 ? references : undefined;
    });
    assert.deepEqual(
      secretOwners.map(({ kind, name, uid }) => ({ kind, name, uid })),
      [{ kind: 'ClusterRole', name: roleName, uid: role.metadata?.uid }],
    );
    for (const read of [
      () => admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
      () => admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
    ]) {
      const owners = await waitFor('the owner reference', async () => {
        const references = (await read()).metadata?.ownerReferences;
        return references && references.length > 0 ? references : undefined;
      });
      assert.deepEqual(
        owners.map(({ kind, name, uid }) => ({ kind, name, uid })),
        [{ kind: 'ClusterRole', name: roleName, uid: role.metadata?.uid }],
      );
    }

    // helm uninstall: the Deployment goes, then the cluster-scoped RBAC.
    assert.equal(await operator.stop(), 0);
    await rbac.deleteClusterRole({ name: roleName });
    for (const [kind, read] of [
      [
        'mutating configuration',
        () => admission.readMutatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
      ],
      [
        'validating configuration',
        () => admission.readValidatingWebhookConfiguration({ name: CONFIGURATION_NAME }),
      ],
      [
        'webhook-tls Secret',
        async () =>
          (await readSecret(namespace)) ?? Promise.reject(Object.assign(new Error('gone'), { code: 404 })),
      ],
    ] as const) {
      await waitFor(
        `the ${kind} to be garbage-collected`,
        async () => {
          try {
            await read();
            return false;
          } catch (error) {
            return statusCode(error) === 404;
          }
        },
        // Two minutes: right after an API server restart (stalled-watches.test.ts runs just before this file),
        // 1.30's garbage collector took 30 s, and once over 60 s, to collect the namespaced Secret.
        { timeoutMs: 120_000 },
      );
    }
  });
});
