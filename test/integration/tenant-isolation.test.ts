/**
 * Tenant isolation on the real control plane: an attacker who can reach the admission port (any
 * pod can) POSTs forged AdmissionReviews for a pod of another tenant that never exists. With
 * caller verification on (the local API server presents its webhook client certificate) the
 * forgeries get 401/403 and nothing else: no decision, no usage disclosed, no reservation. With it
 * off they are answered, but reserve nothing: the tenant's next real pod is still admitted. A
 * forged forward to the leader is refused either way.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { FORWARDED_HEADER } from '../../webhook/server/quota-forwarder.js';
import {
  apiServerClient,
  clusterKubeConfig,
  installCrds,
  kubectl,
  podReadyNamespace,
  waitFor,
} from '../harness/cluster.js';
import {
  freshOperator,
  httpGet,
  httpsCall,
  type HttpAnswer,
  type OperatorProcess,
} from '../harness/operator.js';
import { admissionRequest, reviewBody } from '../harness/requests.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pkiDir } from '../../scripts/cluster/layout.js';

const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';

interface Victim {
  namespace: string;
  quota: string;
  core: CoreV1Api;
  pod: (cpu: string) => V1Pod;
}

/** A tenant with a 2-CPU quota and one real 500m pod in it, admitted through the API server. */
async function victim(t: TestContext): Promise<Victim> {
  const namespace = await podReadyNamespace(t, 'victim');
  const quota = `quota-${namespace}`;
  await waitFor('the quota to be admitted', () =>
    kubectl(
      ['apply', '-f', '-'],
      [
        'apiVersion: scheduling.sigs.k8s.io/v1alpha1',
        'kind: ElasticQuota',
        `metadata: {name: ${quota}, namespace: ${namespace}}`,
        'spec: {min: {cpu: "0"}, max: {cpu: "2"}}',
        '',
      ].join('\n'),
    ),
  );
  const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
  const pod = (cpu: string): V1Pod => ({
    metadata: { generateName: 'worker-', labels: { [QUOTA_LABEL]: quota } },
    spec: {
      containers: [{ name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu } } }],
    },
  });
  await waitFor('the operator to know the quota', () =>
    core.createNamespacedPod({ namespace, body: pod('500m'), dryRun: 'All' }),
  );
  await core.createNamespacedPod({ namespace, body: pod('500m') });
  return { namespace, quota, core, pod };
}

/** A review of a pod that will never exist, as an attacker in another namespace writes it. */
function forgedReview(target: Victim, uid: string): string {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: uid, namespace: target.namespace, labels: { [QUOTA_LABEL]: target.quota } },
    spec: {
      containers: [
        { name: 'main', image: 'registry.invalid/app:1', resources: { requests: { cpu: '1500m' } } },
      ],
    },
  };
  const request = admissionRequest({
    kind: 'Pod',
    resource: 'pods',
    namespace: target.namespace,
    name: uid,
    object,
  });
  return reviewBody({
    ...request,
    uid,
    userInfo: { username: 'system:serviceaccount:attacker:default', groups: ['system:serviceaccounts'] },
  });
}

/** POSTs `body` to the operator's /validate-pod as `curl -k` would, with the given client certificate. */
function post(
  operator: OperatorProcess,
  body: string,
  client?: { cert: string; key: string },
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return httpsCall(operator.port, '/validate-pod', {
    method: 'POST',
    body,
    contentType: 'application/json',
    headers,
    ...(client ? { client } : {}),
  });
}

/** The cluster admin's client certificate: from the CA the operator trusts, but not the API server's name. */
async function adminClient(): Promise<{ cert: string; key: string }> {
  const [cert, key] = await Promise.all(
    ['admin.crt', 'admin.key'].map((file) => readFile(join(pkiDir, file), 'utf8')),
  );
  return { cert: cert ?? '', key: key ?? '' };
}

/** Fills the rest of the victim's quota with real pods and shows the quota still refuses past it. */
async function quotaStillExact(target: Victim, admittedBefore: number): Promise<void> {
  for (let used = admittedBefore; used < 4; used++) {
    await target.core.createNamespacedPod({ namespace: target.namespace, body: target.pod('500m') });
  }
  await assert.rejects(
    target.core.createNamespacedPod({ namespace: target.namespace, body: target.pod('500m') }),
    (error: unknown) => {
      assert.match(
        String((error as { body?: unknown }).body),
        new RegExp(`exceeded quota: ${target.namespace}/${target.quota}, requested: cpu=500m, used: cpu=2,`),
      );
      return true;
    },
  );
}

async function unverified(operator: OperatorProcess, reason: string, result: string): Promise<number> {
  const { body } = await httpGet(operator.metricsPort, '/metrics');
  const line = body
    .split('\n')
    .find((candidate) =>
      candidate.startsWith(`admission_unverified_requests_total{reason="${reason}",result="${result}"}`),
    );
  return Number(line?.split(' ').at(-1) ?? 0);
}

describe('tenant isolation at the admission port', () => {
  it('with verification on, forged reviews get 401/403 and nothing else; the tenant keeps its quota', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t);
    const target = await victim(t);

    const forgeries: [string, { cert: string; key: string } | undefined, Record<string, string>, number][] = [
      ['no credentials at all', undefined, {}, 401],
      ["the cluster admin's certificate (right CA, not the API server's name)", await adminClient(), {}, 403],
      [
        'a forward to the leader, made without a replica certificate',
        undefined,
        { [FORWARDED_HEADER]: '1' },
        403,
      ],
      [
        "a forward made with the API server's own certificate",
        await apiServerClient(),
        { [FORWARDED_HEADER]: '1' },
        403,
      ],
    ];
    for (const [what, client, headers, status] of forgeries) {
      for (let i = 0; i < 3; i++) {
        const answer = await post(operator, forgedReview(target, `forged-${status}-${i}`), client, headers);
        assert.equal(answer.status, status, `${what}: ${answer.body}`);
        // No decision and nothing of the tenant: not its usage, its quota's name, or an answer.
        assert.doesNotMatch(answer.body, /allowed|used|limited|quota|cpu/i, what);
      }
    }
    assert.ok((await unverified(operator, 'no-credentials', 'refused')) >= 3);
    assert.ok((await unverified(operator, 'certificate-subject-not-allowed', 'refused')) >= 3);
    assert.ok((await unverified(operator, 'forward-without-replica-certificate', 'refused')) >= 6);

    // Nothing was reserved: the tenant's pods fill its quota exactly, as if nobody had called.
    await quotaStillExact(target, 1);
  });

  it('with verification off, forged reviews are answered but reserve nothing; forged forwards are refused', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const { operator } = await freshOperator(t, { verifyCallers: false });
    const target = await victim(t);
    for (let i = 0; i < 3; i++) {
      const answer = await post(operator, forgedReview(target, `forged-off-${i}`));
      assert.equal(answer.status, 200, answer.body);
      assert.equal((JSON.parse(answer.body) as { response: { allowed: boolean } }).response.allowed, true);
    }
    const forward = await post(operator, forgedReview(target, 'forged-forward'), undefined, {
      [FORWARDED_HEADER]: '1',
    });
    assert.equal(forward.status, 403, forward.body);
    assert.ok((await unverified(operator, 'no-credentials', 'unreserved')) >= 3);
    // 4.5 CPUs of forged pods were admitted, yet the tenant's next three real pods are too.
    await quotaStillExact(target, 1);
  });

  it('verifies a bearer token with a TokenReview: the allowed user is answered, other tokens are not', async (t) => {
    await installCrds('elasticquotas.scheduling.sigs.k8s.io');
    const namespace = await podReadyNamespace(t, 'tokens');
    const allowedUser = `system:serviceaccount:${namespace}:webhook-caller`;
    const { operator } = await freshOperator(t, { args: [`--client-token-users=${allowedUser}`] });
    const target = await victim(t);
    const core = (await clusterKubeConfig()).makeApiClient(CoreV1Api);
    const tokenOf = async (name: string): Promise<string> => {
      await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
      const issued = await core.createNamespacedServiceAccountToken({
        namespace,
        name,
        body: { spec: { audiences: [], expirationSeconds: 600 } },
      });
      return issued.status?.token ?? '';
    };
    const allowed = await tokenOf('webhook-caller');
    const other = await tokenOf('other-caller');
    const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

    const answered = await post(operator, forgedReview(target, 'by-token'), undefined, bearer(allowed));
    assert.equal(answered.status, 200, answered.body);
    const refused = await post(operator, forgedReview(target, 'by-other'), undefined, bearer(other));
    assert.equal(refused.status, 403, refused.body);
    const invented = await post(
      operator,
      forgedReview(target, 'by-invented'),
      undefined,
      bearer('not-a-token'),
    );
    assert.equal(invented.status, 401, invented.body);
    // The verified caller's admission reserved its 1500m (the ledger serves verified callers): the
    // quota is full until that pod appears or the reservation expires.
    await assert.rejects(
      target.core.createNamespacedPod({ namespace: target.namespace, body: target.pod('500m') }),
      /exceeded quota/,
    );
  });
});
