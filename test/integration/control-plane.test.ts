/**
 * Proves the local control plane is a real one: the pinned version, CRD schema validation,
 * garbage collection, namespace deletion and ServiceAccount provisioning by the controller
 * manager.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiextensionsV1Api, VersionApi, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { kubernetesVersion } from '../../scripts/cluster/layout.js';
import {
  clusterKubeConfig,
  coreApi,
  kubectl,
  objectApi,
  statusCode,
  testNamespace,
  uniqueSuffix,
  waitFor,
} from '../harness/cluster.js';

describe('local control plane', () => {
  it('reports the pinned Kubernetes version at /version', async () => {
    const version = await (await clusterKubeConfig()).makeApiClient(VersionApi).getCode();
    assert.equal(version.gitVersion, kubernetesVersion);
  });

  it('lists the built-in namespaces through kubectl', async () => {
    const { stdout } = await kubectl(['get', 'namespaces', '-o', 'name']);
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      assert.match(stdout, new RegExp(`^namespace/${name}$`, 'm'));
    }
  });

  it('establishes an applied CRD and rejects an object that violates its schema', async (t) => {
    const kc = await clusterKubeConfig();
    const extensions = kc.makeApiClient(ApiextensionsV1Api);
    const plural = `widgets${uniqueSuffix()}`;
    const group = 'tests.admission-operator.io';
    const crd: V1CustomResourceDefinition = {
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: {
          plural,
          singular: plural.slice(0, -1),
          kind: `Widget${plural.slice(7)}`,
          listKind: `Widget${plural.slice(7)}List`,
        },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    required: ['size'],
                    properties: { size: { type: 'integer', minimum: 1 } },
                  },
                },
              },
            },
          },
        ],
      },
    };
    await extensions.createCustomResourceDefinition({ body: crd });
    t.after(async () => {
      await extensions.deleteCustomResourceDefinition({ name: `${plural}.${group}` }).catch(() => undefined);
    });
    await waitFor('the CRD to become Established', async () => {
      const current = await extensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
      return current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });

    const namespace = await testNamespace(t);
    const objects = await objectApi();
    const kind = crd.spec.names.kind;
    const valid = await waitFor('the new resource to be served', () =>
      objects.create({
        apiVersion: `${group}/v1`,
        kind,
        metadata: { name: 'ok', namespace },
        spec: { size: 3 },
      }),
    );
    assert.equal(valid.metadata.name, 'ok');

    await assert.rejects(
      objects.create({
        apiVersion: `${group}/v1`,
        kind,
        metadata: { name: 'bad', namespace },
        spec: { size: 0 },
      }),
      (error: unknown) => {
        assert.equal(statusCode(error), 422);
        assert.match(String((error as { body?: unknown }).body), /spec\.size/);
        return true;
      },
    );
  });

  it('garbage-collects the dependent of a deleted owner', async (t) => {
    const core = await coreApi();
    const namespace = await testNamespace(t);
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: 'owner' });
    await waitFor(
      'the garbage collector to delete the dependent',
      async () => {
        try {
          await core.readNamespacedConfigMap({ namespace, name: 'dependent' });
          return false;
        } catch (error) {
          return statusCode(error) === 404;
        }
      },
      { timeoutMs: 60_000 },
    );
  });

  it('completes the deletion of a namespace that holds objects', async () => {
    const core = await coreApi();
    const name = `doomed-${uniqueSuffix()}`;
    await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedConfigMap({ namespace: name, body: { metadata: { name: 'content' } } });
    await core.deleteNamespace({ name });
    await waitFor(
      'the namespace to be gone',
      async () => {
        try {
          await core.readNamespace({ name });
          return false;
        } catch (error) {
          return statusCode(error) === 404;
        }
      },
      { timeoutMs: 60_000 },
    );
  });

  it('gives a new namespace its default ServiceAccount', async (t) => {
    const core = await coreApi();
    const namespace = await testNamespace(t);
    const account = await waitFor('the default ServiceAccount', () =>
      core.readNamespacedServiceAccount({ namespace, name: 'default' }),
    );
    assert.equal(account.metadata?.name, 'default');
  });
});
