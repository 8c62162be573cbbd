/**
 * Koordinator's colocation rules on pods through the real API server: ClusterColocationProfiles
 * applied to new pods, and the QoS × priority checks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installCrds, kubectl, podReadyNamespace, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { freshOperator } from '../harness/operator.js';

function pod(labels: Record<string, string>, cpu: string): string {
  const labelLines = Object.entries(labels).map(([key, value]) => `    ${key}: "${value}"`);
  return [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    '  generateName: colo-',
    '  labels:',
    ...labelLines,
    'spec:',
    '  containers:',
    `  - {name: main, image: registry.invalid/app:1, resources: {requests: {cpu: "${cpu}"}}}`,
    '',
  ].join('\n');
}

describe('colocation checks', () => {
  it('refuses a forbidden QoS × priority pair and fractional CPUs for LSR, admits a valid BE batch pod', async (t) => {
    await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'colo');
    await assert.rejects(
      kubectl(['create', '-n', namespace, '-f', '-'], pod({ 'koordinator.sh/qosClass': 'BE' }, '1')),
      (error: { stderr?: string }) => {
        assert.match(
          error.stderr ?? '',
          /denied the request: Pod: Forbidden: koordinator\.sh\/qosClass=BE and priorityClass= cannot be used in combination/,
        );
        return true;
      },
    );
    await assert.rejects(
      kubectl(
        ['create', '-n', namespace, '-f', '-'],
        pod({ 'koordinator.sh/qosClass': 'LSR', 'koordinator.sh/priority-class': 'koord-prod' }, '1500m'),
      ),
      (error: { stderr?: string }) => {
        assert.match(error.stderr ?? '', /the requested CPUs of LSR Pod must be integer/);
        return true;
      },
    );
    const { stdout } = await kubectl(
      ['create', '-n', namespace, '-f', '-'],
      pod({ 'koordinator.sh/qosClass': 'BE', 'koordinator.sh/priority-class': 'koord-batch' }, '1'),
    );
    assert.match(stdout, /created/);
  });
});

interface StoredPod {
  metadata: { labels?: Record<string, string> };
  spec: {
    priority?: number;
    priorityClassName?: string;
    schedulerName?: string;
    containers: { resources: { requests?: Record<string, string>; limits?: Record<string, string> } }[];
  };
}

describe('ClusterColocationProfile', () => {
  it('turns a matching pod into a BE batch pod: labels, priority and batch resources, as kubectl reads it back', async (t) => {
    await installCrds('clustercolocationprofiles.config.koordinator.sh');
    const suffix = uniqueSuffix();
    const priorityClass = `batch-${suffix}`;
    const profile = `colocate-${suffix}`;
    t.after(async () => {
      await kubectl(['delete', 'clustercolocationprofile', profile, '--ignore-not-found']);
      await kubectl(['delete', 'priorityclass', priorityClass, '--ignore-not-found']);
    });
    await kubectl(
      ['create', '-f', '-'],
      `apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: ${priorityClass}}\nvalue: 5500\npreemptionPolicy: Never\n`,
    );
    await freshOperator(t);
    const namespace = await podReadyNamespace(t, 'ccp');
    await kubectl(
      ['create', '-f', '-'],
      [
        'apiVersion: config.koordinator.sh/v1alpha1',
        'kind: ClusterColocationProfile',
        `metadata: {name: ${profile}}`,
        'spec:',
        `  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ${namespace}}}`,
        '  selector: {matchLabels: {app: batch-job}}',
        '  qosClass: BE',
        `  priorityClassName: ${priorityClass}`,
        '  koordinatorPriority: 1111',
        '  schedulerName: koord-scheduler',
        '  labels: {colocated: "true"}',
        '',
      ].join('\n'),
    );
    const batchPod = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {name: batch, labels: {app: batch-job}}',
      'spec:',
      '  containers:',
      '  - name: main',
      '    image: registry.invalid/job:1',
      '    resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "2", memory: 2Gi}}',
      '',
    ].join('\n');
    // The operator sees the profile through its watch; a server-side dry run shows when it has.
    await waitFor('the profile to reach the operator', async () => {
      const { stdout } = await kubectl(
        ['create', '-n', namespace, '--dry-run=server', '-o', 'json', '-f', '-'],
        batchPod,
      );
      return (JSON.parse(stdout) as StoredPod).metadata.labels?.colocated === 'true' ? true : undefined;
    });
    await kubectl(['create', '-n', namespace, '-f', '-'], batchPod);
    const { stdout } = await kubectl(['get', 'pod', 'batch', '-n', namespace, '-o', 'json']);
    const stored = JSON.parse(stdout) as StoredPod;
    assert.deepEqual(stored.metadata.labels, {
      app: 'batch-job',
      colocated: 'true',
      'koordinator.sh/qosClass': 'BE',
      'koordinator.sh/priority': '1111',
    });
    assert.equal(stored.spec.priorityClassName, priorityClass);
    assert.equal(stored.spec.priority, 5500);
    assert.equal(stored.spec.schedulerName, 'koord-scheduler');
    assert.deepEqual(stored.spec.containers[0]?.resources, {
      requests: { 'kubernetes.io/batch-cpu': '1k', 'kubernetes.io/batch-memory': '1Gi' },
      limits: { 'kubernetes.io/batch-cpu': '2k', 'kubernetes.io/batch-memory': '2Gi' },
    });

    // A pod the selector does not match is left as it was.
    await kubectl(
      ['create', '-n', namespace, '-f', '-'],
      batchPod.replace('name: batch, labels: {app: batch-job}', 'name: web, labels: {app: web}'),
    );
    const web = JSON.parse(
      (await kubectl(['get', 'pod', 'web', '-n', namespace, '-o', 'json'])).stdout,
    ) as StoredPod;
    assert.deepEqual(web.metadata.labels, { app: 'web' });
    assert.deepEqual(web.spec.containers[0]?.resources.requests, { cpu: '1', memory: '1Gi' });
  });
});

describe('Reservation', () => {
  it('gets the matching profile’s labels and pod-template settings, ttl 24h by default, and keeps preAllocationPolicy', async (t) => {
    await installCrds(
      'clustercolocationprofiles.config.koordinator.sh',
      'reservations.scheduling.koordinator.sh',
    );
    const suffix = uniqueSuffix();
    const profile = `reserve-${suffix}`;
    const reservation = `rsv-${suffix}`;
    t.after(async () => {
      await kubectl(['delete', 'reservation', reservation, '--ignore-not-found']);
      await kubectl(['delete', 'clustercolocationprofile', profile, '--ignore-not-found']);
    });
    await freshOperator(t);
    await kubectl(
      ['create', '-f', '-'],
      [
        'apiVersion: config.koordinator.sh/v1alpha1',
        'kind: ClusterColocationProfile',
        `metadata: {name: ${profile}}`,
        'spec:',
        // Quoted: a suffix of digits would otherwise be a YAML integer, which a label selector refuses.
        `  selector: {matchLabels: {reserve-for: "${suffix}"}}`,
        '  qosClass: LS',
        '  schedulerName: koord-scheduler',
        '',
      ].join('\n'),
    );
    const manifest = [
      'apiVersion: scheduling.koordinator.sh/v1alpha1',
      'kind: Reservation',
      `metadata: {name: ${reservation}, labels: {reserve-for: "${suffix}"}}`,
      'spec:',
      '  template: {spec: {containers: [{name: main, image: registry.invalid/app:1}]}}',
      '  owners: [{labelSelector: {matchLabels: {app: web}}}]',
      // Koordinator v1.8.0's field: kept, not pruned, with its mode defaulted.
      '  preAllocationPolicy: {enableMultiple: true}',
      '',
    ].join('\n');
    await waitFor('the profile to reach the operator', async () => {
      const { stdout } = await kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], manifest);
      return stdout.includes('koord-scheduler') ? true : undefined;
    });
    await kubectl(['create', '-f', '-'], manifest);
    const stored = JSON.parse((await kubectl(['get', 'reservation', reservation, '-o', 'json'])).stdout) as {
      metadata: { labels: Record<string, string> };
      spec: {
        ttl?: string;
        allocateOnce?: boolean;
        preAllocationPolicy?: unknown;
        template: { spec: { schedulerName?: string } };
      };
    };
    assert.equal(stored.metadata.labels['koordinator.sh/qosClass'], 'LS');
    assert.equal(stored.spec.template.spec.schedulerName, 'koord-scheduler');
    assert.equal(stored.spec.ttl, '24h');
    assert.equal(stored.spec.allocateOnce, true);
    assert.deepEqual(stored.spec.preAllocationPolicy, { enableMultiple: true, mode: 'Default' });
  });
});

describe('enhanced pod validation', () => {
  it('with its gate on, refuses bad rules when written and pods missing the required labels', async (t) => {
    await freshOperator(t, { args: ['--feature-gates=EnablePodEnhancedValidator=true'] });
    await kubectl(['create', 'namespace', 'koordinator-system']).catch(() => undefined);
    t.after(async () => {
      await kubectl([
        'delete',
        'configmap',
        'pod-enhanced-validator-config',
        '-n',
        'koordinator-system',
        '--ignore-not-found',
      ]);
    });
    const config = (rules: string): string =>
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: {name: pod-enhanced-validator-config, namespace: koordinator-system}',
        'data:',
        '  enable: "true"',
        `  rules: '${rules}'`,
        '',
      ].join('\n');
    await assert.rejects(
      kubectl(['apply', '-f', '-'], config('[{"name": "team", "requiredLabels": "team"}]')),
      /pod-enhanced-validator-config data\[rules\]\[0\]: must be/,
    );
    const namespace = await podReadyNamespace(t, 'enhanced');
    await kubectl(['apply', '-f', '-'], config(`[{"name": "team", "requiredLabels": ["team"]}]`));
    // The operator reads the rules through its watch; refusal shows it has.
    await waitFor('the rules to reach the operator', () =>
      kubectl(['create', '-n', namespace, '-f', '-'], pod({}, '100m')).then(
        () => undefined,
        (error: unknown) =>
          /required label 'team' is missing/.test((error as { stderr?: string }).stderr ?? '')
            ? true
            : undefined,
      ),
    );
    assert.match(
      (await kubectl(['create', '-n', namespace, '-f', '-'], pod({ team: 'a' }, '100m'))).stdout,
      /created/,
    );
  });
});
