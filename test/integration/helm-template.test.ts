/**
 * The chart as `helm template` renders it, checked against what the operator needs and what a
 * cluster admin installing it expects: the parts that need no cluster to show a defect.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { AUDITED_KINDS } from '../../operator/audit/audited-objects.js';
import { ALL_KINDS } from '../../webhook/kinds.js';
import { parseOptions, type OperatorOptions } from '../../operator/config/options.js';
import { ENFORCEMENT_ACTIONS } from '../../webhook/enforcement/enforcement.js';
import { FEATURE_GATE_DEFAULTS } from '../../webhook/feature-gates.js';
import { webhookShortNames } from '../../webhook/table.js';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { PROBE_TIMEOUT_MS } from '../harness/balancer.js';

const execFileAsync = promisify(execFile);
const chart = join(repoRoot, 'charts', 'admission-operator');

interface Rendered {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown> & {
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: Record<string, unknown> & {
        serviceAccountName?: string;
        priorityClassName?: string;
        containers?: {
          image?: string;
          args?: string[];
          env?: { name: string; value?: string }[];
          readinessProbe?: { timeoutSeconds?: number; failureThreshold?: number };
          livenessProbe?: { timeoutSeconds?: number };
        }[];
      };
    };
    ports?: { name: string; port: number }[];
    selector?: { matchLabels?: Record<string, string> };
    groups?: { rules: { expr: string }[] }[];
  };
  rules?: { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }[];
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** `helm <command> <chart> <args>` (template also takes the release name); rejects with helm's stderr. */
async function helm(command: 'template' | 'lint', args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(
    await ensureHelm(),
    [
      command,
      ...(command === 'template' ? ['admission-operator'] : []),
      chart,
      '-n',
      'admission-system',
      ...args,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

/** The chart's objects for `helm template` with `--set` values. */
async function render(...sets: string[]): Promise<Rendered[]> {
  const stdout = await helm(
    'template',
    sets.flatMap((set) => ['--set', set]),
  );
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Rendered | null)
    .filter((object): object is Rendered => object !== null);
}

describe('the chart, rendered', () => {
  it('grants the ClusterRole get, list and watch on every kind the audit lists or the store watches', async () => {
    const clusterRole = (await render()).find((object) => object.kind === 'ClusterRole');
    assert.ok(clusterRole?.rules, 'a ClusterRole is rendered');
    // Kinds read by name (ConfigMaps: the ones the operator reads) are granted by name, checked below.
    const listed = ALL_KINDS.filter((kind) => !kind.byName && (AUDITED_KINDS.includes(kind) || kind.watched));
    for (const kind of listed) {
      const granted = new Set(
        clusterRole.rules
          .filter(
            (rule) =>
              (rule.apiGroups ?? []).includes(kind.group) &&
              (rule.resources ?? []).includes(kind.plural) &&
              !rule.resourceNames,
          )
          .flatMap((rule) => rule.verbs),
      );
      for (const verb of ['get', 'list', 'watch']) {
        assert.ok(
          granted.has(verb),
          `ClusterRole grants ${verb} on ${kind.plural}.${kind.group || 'core'} (the audit lists it or ` +
            `webhook/kinds.ts marks it watched): run npm run chart:generate, which writes its rule into ` +
            `charts/admission-operator/templates/clusterrole.yaml`,
        );
      }
    }
  });

  it('waits 5 s for a probe (a burst queues its handshake), as the multi-replica harness models it, and fails readiness on one 503', async () => {
    const deployment = (await render()).find((object) => object.kind === 'Deployment');
    const container = deployment?.spec?.template?.spec?.containers?.[0];
    assert.ok(container, 'a Deployment with a container is rendered');
    assert.equal(container.readinessProbe?.timeoutSeconds, PROBE_TIMEOUT_MS / 1000);
    assert.equal(container.livenessProbe?.timeoutSeconds, PROBE_TIMEOUT_MS / 1000);
    assert.equal(container.readinessProbe?.failureThreshold, 1, 'a draining replica leaves at its first 503');
  });

  it('renders no PodDisruptionBudget for one replica (it would block every drain), and one keeping a replica for two', async () => {
    const single = (await render('replicaCount=1')).filter((object) => object.kind === 'PodDisruptionBudget');
    assert.deepEqual(single, [], 'no budget over a single replica');
    const pair = (await render('replicaCount=2')).filter((object) => object.kind === 'PodDisruptionBudget');
    assert.equal(pair.length, 1);
    assert.equal(pair[0]?.spec?.minAvailable, 1);
  });

  it('points /validate-configmap at Koordinator’s namespace as the binary does, and installs without that namespace', async () => {
    const parsed = parseOptions(['--namespace=admission-system'], {});
    assert.equal(parsed.help, false);
    const binaryDefault = parsed.help ? '' : parsed.options.sloConfigNamespace;
    assert.equal(binaryDefault, 'koordinator-system');
    const objects = await render();
    const deployment = objects.find((object) => object.kind === 'Deployment');
    const args = deployment?.spec?.template?.spec?.containers?.[0]?.args ?? [];
    assert.ok(args.includes(`--slo-config-namespace=${binaryDefault}`), `args: ${args.join(' ')}`);
    // Every namespaced object goes to the release namespace (or `default`, which every cluster
    // has: Events about cluster-scoped objects land there): an install needs no Koordinator namespace.
    const elsewhere = objects.filter(
      (object) =>
        object.metadata.namespace !== undefined &&
        !['admission-system', 'default'].includes(object.metadata.namespace),
    );
    assert.deepEqual(
      elsewhere.map((object) => `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`),
      [],
    );
    const clusterRole = objects.find((object) => object.kind === 'ClusterRole');
    const reads = (clusterRole?.rules ?? []).filter(
      (rule) =>
        rule.resources?.includes('configmaps') && rule.resourceNames?.includes('slo-controller-config'),
    );
    assert.deepEqual(
      reads.map((rule) => rule.verbs),
      [['get', 'list', 'watch']],
    );
  });

  it('keeps /metrics off the webhook Service: a metrics Service of its own, which the ServiceMonitor selects with the labels a Prometheus looks for', async () => {
    const objects = await render(
      'serviceMonitor.enabled=true',
      'serviceMonitor.labels.release=prometheus',
      'metrics.prometheusRule.enabled=true',
    );
    const services = objects.filter((object) => object.kind === 'Service');
    const webhook = services.find((service) => service.metadata.name === 'admission-operator');
    assert.deepEqual(
      webhook?.spec?.ports?.map((port) => port.port),
      [443],
      'the webhook Service exposes the admission port alone',
    );
    const metrics = services.find((service) => service.spec?.ports?.some((port) => port.port === 8080));
    assert.ok(metrics, 'a Service exposes the metrics port');
    assert.notEqual(metrics.metadata.name, 'admission-operator');

    const monitor = objects.find((object) => object.kind === 'ServiceMonitor');
    assert.equal(
      monitor?.metadata.labels?.release,
      'prometheus',
      'serviceMonitor.labels reach the ServiceMonitor',
    );
    const selects = (service: Rendered): boolean =>
      Object.entries(monitor?.spec?.selector?.matchLabels ?? {}).every(
        ([key, value]) => service.metadata.labels?.[key] === value,
      );
    assert.deepEqual(
      services.filter(selects).map((service) => service.metadata.name),
      [metrics.metadata.name],
      'the ServiceMonitor selects the metrics Service only',
    );

    // A ServiceMonitor's job label is the scraped Service's name: the alerts select that job.
    const rule = objects.find((object) => object.kind === 'PrometheusRule');
    const exprs = (rule?.spec?.groups ?? []).flatMap((group) => group.rules.map((r) => r.expr)).join('\n');
    assert.match(exprs, new RegExp(`job="${metrics.metadata.name}"`));
  });

  it('renders no CRD by default; with crds.enabled the project’s, kept on uninstall unless crds.keep=false', async () => {
    // Every kind's CRD is Koordinator's or Kthena's: a render holding one would claim it from their
    // release or Argo CD app (docs/beside-upstream.md).
    const crdsOf = (objects: Rendered[]): Rendered[] =>
      objects.filter((object) => object.kind === 'CustomResourceDefinition');
    assert.deepEqual(crdsOf(await render()), []);
    const files = (await readdir(join(repoRoot, 'crds'))).filter((file) => file.endsWith('.yaml')).sort();
    const crds = crdsOf(await render('crds.enabled=true'));
    assert.deepEqual(crds.map((crd) => `${crd.metadata.name}.yaml`).sort(), files);
    for (const crd of crds) {
      assert.equal(
        crd.metadata.annotations?.['helm.sh/resource-policy'],
        'keep',
        `${crd.metadata.name} is kept`,
      );
      // Argo CD reads its own annotation, not Helm's policy.
      assert.equal(
        crd.metadata.annotations?.['argocd.argoproj.io/sync-options'],
        'Prune=false,Delete=false',
        `${crd.metadata.name} is kept by Argo CD`,
      );
      const source = parse(
        await readFile(join(repoRoot, 'crds', `${crd.metadata.name}.yaml`), 'utf8'),
      ) as Rendered;
      assert.deepEqual(crd.spec, source.spec, `${crd.metadata.name} is the project's CRD`);
    }
    const unkept = crdsOf(await render('crds.enabled=true', 'crds.keep=false'));
    assert.equal(unkept.length, files.length);
    assert.ok(
      unkept.every(
        (crd) =>
          crd.metadata.annotations?.['helm.sh/resource-policy'] === undefined &&
          crd.metadata.annotations?.['argocd.argoproj.io/sync-options'] === undefined,
      ),
    );
  });

  it('uses no lookup: helm template (Argo CD) renders exactly what helm install applies', async () => {
    const dir = join(chart, 'templates');
    for (const file of await readdir(dir)) {
      assert.doesNotMatch(await readFile(join(dir, file), 'utf8'), /\blookup\s+"/, `templates/${file}`);
    }
  });
});

/** Helm's error output (stdout and stderr) for a command that must fail. */
async function failure(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return `${stdout}\n${stderr}`;
  }
  assert.fail('helm succeeded');
}

const deploymentOf = (objects: Rendered[]): Rendered => {
  const deployment = objects.find((object) => object.kind === 'Deployment');
  assert.ok(deployment, 'a Deployment is rendered');
  return deployment;
};

describe('the chart’s conventional values', () => {
  it('runs the replicas system-cluster-critical with a ResourceQuota admitting that class, and neither when turned off', async () => {
    const objects = await render();
    assert.equal(deploymentOf(objects).spec?.template?.spec?.priorityClassName, 'system-cluster-critical');
    const quotas = objects.filter((object) => object.kind === 'ResourceQuota');
    assert.equal(quotas.length, 1);
    assert.equal(quotas[0]?.metadata.namespace, 'admission-system');
    assert.deepEqual(quotas[0]?.spec?.scopeSelector, {
      matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['system-cluster-critical'] }],
    });
    const hard = (quotas[0]?.spec?.hard ?? {}) as { pods?: string };
    assert.ok(Number(hard.pods) >= 4 * 2, `room for a rolling update and terminating pods: ${hard.pods}`);

    const custom = await render('priorityClassName=platform-critical', 'replicaCount=30');
    const quota = custom.find((object) => object.kind === 'ResourceQuota');
    assert.deepEqual(quota?.spec?.scopeSelector, {
      matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['platform-critical'] }],
    });
    assert.equal(
      (quota?.spec?.hard as { pods?: string }).pods,
      '120',
      'four pods per replica above 25 replicas',
    );

    const noQuota = await render('resourceQuota=false');
    assert.equal(noQuota.filter((object) => object.kind === 'ResourceQuota').length, 0);
    assert.equal(deploymentOf(noQuota).spec?.template?.spec?.priorityClassName, 'system-cluster-critical');
    const noClass = await render('priorityClassName=');
    assert.equal(noClass.filter((object) => object.kind === 'ResourceQuota').length, 0);
    assert.equal(deploymentOf(noClass).spec?.template?.spec?.priorityClassName, undefined);
  });

  it('binds every RBAC object to the ServiceAccount it runs as: its own, annotated, or an existing one by name', async () => {
    const subjectsOf = (objects: Rendered[]): string[] =>
      objects.flatMap((object) =>
        (object.subjects ?? []).map((subject) => `${subject.kind}/${subject.name}`),
      );
    const own = await render('serviceAccount.annotations.iam\\.example\\.com/role=operator');
    const account = own.find((object) => object.kind === 'ServiceAccount');
    assert.equal(account?.metadata.name, 'admission-operator');
    assert.deepEqual(account?.metadata.annotations, { 'iam.example.com/role': 'operator' });
    assert.equal(deploymentOf(own).spec?.template?.spec?.serviceAccountName, 'admission-operator');
    const bindings = own.filter((object) => object.subjects !== undefined);
    assert.equal(bindings.length, 3, 'ClusterRoleBinding, RoleBinding and the events RoleBinding');
    assert.ok(subjectsOf(own).every((subject) => subject === 'ServiceAccount/admission-operator'));

    // With every optional binding rendered too (the PolicyReport writer's).
    const existing = await render(
      'serviceAccount.create=false',
      'serviceAccount.name=platform-operator',
      'audit.policyReports.enabled=true',
    );
    assert.equal(existing.filter((object) => object.kind === 'ServiceAccount').length, 0);
    assert.equal(deploymentOf(existing).spec?.template?.spec?.serviceAccountName, 'platform-operator');
    assert.deepEqual(new Set(subjectsOf(existing)), new Set(['ServiceAccount/platform-operator']));
    assert.equal(subjectsOf(existing).length, 4);
  });

  it('names objects by nameOverride or fullnameOverride, and keeps its selector labels over podLabels', async () => {
    const named = await render('nameOverride=admission');
    const deployment = deploymentOf(named);
    assert.equal(deployment.metadata.name, 'admission-operator-admission');
    assert.equal(deployment.metadata.labels?.['app.kubernetes.io/name'], 'admission');
    assert.deepEqual(deployment.spec?.selector?.matchLabels, {
      'app.kubernetes.io/name': 'admission',
      'app.kubernetes.io/instance': 'admission-operator',
    });
    const full = await render('fullnameOverride=webhooks');
    for (const kind of ['Deployment', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']) {
      assert.equal(full.find((object) => object.kind === kind)?.metadata.name, 'webhooks', kind);
    }
    assert.deepEqual(
      full
        .filter((object) => object.kind === 'Service')
        .map((service) => service.metadata.name)
        .sort(),
      ['webhooks', 'webhooks-metrics'],
    );
    const args = deploymentOf(full).spec?.template?.spec?.containers?.[0]?.args ?? [];
    assert.ok(args.includes('--service-name=webhooks') && args.includes('--owner-cluster-role=webhooks'));

    const labelled = deploymentOf(
      await render(
        'podLabels.team=platform',
        'podLabels.app\\.kubernetes\\.io/name=other',
        'podAnnotations.a=b',
      ),
    );
    assert.deepEqual(labelled.spec?.template?.metadata?.labels, {
      'app.kubernetes.io/name': 'admission-operator',
      'app.kubernetes.io/instance': 'admission-operator',
      team: 'platform',
    });
    assert.deepEqual(labelled.spec?.template?.metadata?.annotations, { a: 'b' });
  });

  it('adds affinity and extra env, pulls by digest, and passes extra args last, so the operator takes their value', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const deployment = deploymentOf(
      await render(
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool',
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
        'extraEnv[0].name=HTTPS_PROXY',
        'extraEnv[0].value=http://proxy:3128',
        'extraArgs[0]=--log-level=debug',
        'extraArgs[1]=--max-amplification-ratio=20',
        `image.digest=${digest}`,
        'image.tag=ignored',
      ),
    );
    const pod = deployment.spec?.template?.spec;
    assert.deepEqual(pod?.affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }],
        },
      },
    });
    const container = pod?.containers?.[0];
    assert.equal(container?.image, `ghcr.io/admission-operator/admission-operator@${digest}`);
    assert.deepEqual(container?.env?.at(-1), { name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
    const args = (container?.args ?? []).map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system'));
    assert.ok(args.includes('--log-level=info'), 'the chart sets its own log level first');
    const parsed = parseOptions(args, {});
    assert.equal(parsed.help, false);
    assert.equal(parsed.help ? '' : parsed.options.logLevel, 'debug');
    assert.equal(parsed.help ? 0 : parsed.options.maxAmplificationRatio, 20);

    const tagged = deploymentOf(await render('image.tag=1.2.3')).spec?.template?.spec?.containers?.[0];
    assert.equal(tagged?.image, 'ghcr.io/admission-operator/admission-operator:1.2.3');
  });

  it('runs on the node’s network when asked, one replica per node on the port given, beside the admin’s affinity', async () => {
    const plain = deploymentOf(await render()).spec?.template?.spec;
    assert.equal(plain?.hostNetwork, undefined);
    assert.equal(plain?.dnsPolicy, undefined);
    const pod = deploymentOf(
      await render(
        'hostNetwork=true',
        'port=10260',
        'metrics.port=10261',
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool',
        'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
      ),
    ).spec?.template?.spec;
    assert.equal(pod?.hostNetwork, true);
    assert.equal(pod?.dnsPolicy, 'ClusterFirstWithHostNet');
    assert.deepEqual(pod?.affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }],
        },
      },
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: {
              matchLabels: {
                'app.kubernetes.io/name': 'admission-operator',
                'app.kubernetes.io/instance': 'admission-operator',
              },
            },
            topologyKey: 'kubernetes.io/hostname',
          },
        ],
      },
    });
    const container = (pod?.containers?.[0] ?? {}) as {
      args?: string[];
      ports?: { name: string; containerPort: number }[];
    };
    assert.deepEqual(container.ports, [
      { name: 'https', containerPort: 10260 },
      { name: 'metrics', containerPort: 10261 },
    ]);
    const args = (container.args ?? []).map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system'));
    const parsed = parseOptions(args, {});
    assert.ok(!parsed.help);
    assert.equal(parsed.options.port, 10260);
    assert.deepEqual(parsed.options.metricsAddress, { host: '0.0.0.0', port: 10261 });
    // The two servers on one port would clash: refused when rendered.
    assert.match(
      await failure(helm('template', ['--set', 'port=8080'])),
      /port and metrics\.port must differ/,
    );
  });

  it('passes the admin’s namespace and object selectors to the operator, which reads them as it writes them', async () => {
    const args = (
      deploymentOf(
        await render(
          'webhooks.namespaceSelector.matchExpressions[0].key=example.com/admission',
          'webhooks.namespaceSelector.matchExpressions[0].operator=NotIn',
          'webhooks.namespaceSelector.matchExpressions[0].values[0]=off',
          'webhooks.objectSelector.matchLabels.example\\.com/admission=on',
        ),
      ).spec?.template?.spec?.containers?.[0]?.args ?? []
    ).map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system'));
    const parsed = parseOptions(args, {});
    assert.ok(!parsed.help);
    assert.deepEqual(parsed.options.webhookNamespaceSelector, {
      matchExpressions: [{ key: 'example.com/admission', operator: 'NotIn', values: ['off'] }],
    });
    assert.deepEqual(parsed.options.webhookObjectSelector, {
      matchLabels: { 'example.com/admission': 'on' },
    });
  });

  it('installs on Kubernetes 1.30 and later, vendor builds included, and refuses 1.29 naming its kubeVersion', async () => {
    for (const version of ['v1.30.0', 'v1.30.0-gke.1', 'v1.35.4']) {
      assert.match(await helm('template', ['--kube-version', version]), /kind: Deployment/, version);
    }
    assert.match(
      await failure(helm('template', ['--kube-version', 'v1.29.9'])),
      /chart requires kubeVersion: >=1\.30\.0-0 which is incompatible with Kubernetes v1\.29\.9/,
    );
  });
});

describe('the values schema', () => {
  const gate = Object.keys(FEATURE_GATE_DEFAULTS)[0]!;
  const webhook = webhookShortNames()[0]!;
  const quoted = ENFORCEMENT_ACTIONS.map((action) => `'${action}'`).join(', ');
  const bad: { what: string; set: string; message: RegExp }[] = [
    {
      what: 'an unknown feature gate',
      set: `featureGates.${gate}x=true`,
      message: new RegExp(`at '/featureGates': additional properties '${gate}x' not allowed`),
    },
    {
      what: 'an unknown webhook in enforcement',
      set: `webhooks.enforcement.${webhook}x=warn`,
      message: new RegExp(`at '/webhooks/enforcement': additional properties '${webhook}x' not allowed`),
    },
    {
      what: 'an unknown webhook in overrides',
      set: `webhooks.overrides.${webhook}x.timeoutSeconds=3`,
      message: new RegExp(`at '/webhooks/overrides': additional properties '${webhook}x' not allowed`),
    },
    {
      what: 'an unknown enforcement action',
      set: `webhooks.enforcement.${webhook}=block`,
      message: new RegExp(`at '/webhooks/enforcement/${webhook}': value must be one of ${quoted}`),
    },
    {
      what: 'a gate that is not a boolean',
      set: `featureGates.${gate}=yes`,
      message: new RegExp(`at '/featureGates/${gate}': got string, want boolean`),
    },
    {
      what: 'a selector operator the API server does not know',
      set: 'webhooks.objectSelector.matchExpressions[0].operator=Sometimes',
      message:
        /at '\/webhooks\/objectSelector\/matchExpressions\/0': missing property 'key'|value must be one of/,
    },
    {
      what: 'an unknown root key',
      set: 'replicaCountt=2',
      message: /at '': additional properties 'replicaCountt' not allowed/,
    },
    {
      what: 'serviceAccount.create=false without a name',
      set: 'serviceAccount.create=false',
      message: /at '\/serviceAccount\/name': minLength: got 0, want 1/,
    },
  ];
  for (const { what, set, message } of bad) {
    it(`fails helm lint and helm template on ${what}, with the schema’s message`, async () => {
      assert.match(await failure(helm('lint', ['--set', set])), message);
      assert.match(await failure(helm('template', ['--set', set])), message);
    });
  }

  it('accepts every gate, every webhook and * in enforcement, and a parent chart’s global values', async () => {
    const sets = [
      ...Object.keys(FEATURE_GATE_DEFAULTS).map((name) => `featureGates.${name}=true`),
      ...webhookShortNames().map((name) => `webhooks.enforcement.${name}=warn`),
      'webhooks.enforcement.*=dryrun',
      'global.imageRegistry=registry.example.com',
    ];
    const lint = await helm(
      'lint',
      sets.flatMap((set) => ['--set', set]),
    );
    assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    const args = deploymentOf(await render(...sets)).spec?.template?.spec?.containers?.[0]?.args ?? [];
    const parsed = parseOptions(
      args.map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system')),
      {},
    );
    assert.equal(parsed.help, false, 'the operator takes every value the schema lets through');
  });

  it('takes Koordinator’s names of the same webhooks’ gates, as its chart’s featureGates spells them', async () => {
    const args =
      deploymentOf(
        await render(
          'featureGates.ElasticMutatingWebhook=false',
          'featureGates.ElasticValidatingWebhook=false',
          'featureGates.PodValidatingWebhook=true',
        ),
      ).spec?.template?.spec?.containers?.[0]?.args ?? [];
    const parsed = parseOptions(
      args.map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system')),
      {},
    );
    assert.equal(parsed.help, false);
    const gates = parsed.help ? undefined : parsed.options.featureGates;
    assert.equal(gates?.ElasticQuotaMutatingWebhook, false);
    assert.equal(gates?.ElasticQuotaValidatingWebhook, false);
    assert.equal(gates?.PodValidatingWebhook, true);
  });
});

describe('the chart’s PolicyReport options, rendered', () => {
  const policyReportCrds = ['clusterpolicyreports.wgpolicyk8s.io', 'policyreports.wgpolicyk8s.io'];
  const grantsReports = (objects: Rendered[]): boolean =>
    objects.some((object) =>
      (object.rules ?? []).some((rule) => (rule.apiGroups ?? []).includes('wgpolicyk8s.io')),
    );

  it('renders neither the CRDs nor any wgpolicyk8s.io access by default', async () => {
    const objects = await render();
    const names = objects
      .filter((object) => object.kind === 'CustomResourceDefinition')
      .map((crd) => crd.metadata.name);
    assert.ok(!names.some((name) => name.endsWith('.wgpolicyk8s.io')), names.join(', '));
    assert.equal(grantsReports(objects), false);
    const args = objects.find((object) => object.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]
      ?.args;
    assert.ok(args?.includes('--audit-policy-reports=false'));
  });

  it('with installCRDs, renders the project’s PolicyReport CRDs, kept on uninstall', async () => {
    const crds = (await render('audit.policyReports.installCRDs=true')).filter(
      (object) =>
        object.kind === 'CustomResourceDefinition' && object.metadata.name.endsWith('.wgpolicyk8s.io'),
    );
    assert.deepEqual(crds.map((crd) => crd.metadata.name).sort(), policyReportCrds);
    for (const crd of crds) {
      assert.equal(crd.metadata.annotations?.['helm.sh/resource-policy'], 'keep');
      const file = `${crd.metadata.name}.yaml`;
      const source = await readFile(join(repoRoot, 'crds', 'policy-reports', file), 'utf8');
      assert.equal(
        await readFile(join(chart, 'files', 'policy-report-crds', file), 'utf8'),
        source,
        `charts/admission-operator/files/policy-report-crds/${file} differs from crds/policy-reports/${file}: ` +
          'run npm run chart:generate',
      );
      assert.deepEqual(crd.spec, (parse(source) as Rendered).spec);
    }
  });

  it('with enabled, grants the operator the reports and tells the periodic audit to write them', async () => {
    const objects = await render('audit.policyReports.enabled=true');
    const role = objects.find(
      (object) => object.kind === 'ClusterRole' && object.metadata.name.endsWith('-policy-reports'),
    );
    assert.deepEqual(role?.rules, [
      {
        apiGroups: ['wgpolicyk8s.io'],
        resources: ['policyreports', 'clusterpolicyreports'],
        verbs: ['get', 'list', 'create', 'patch', 'delete'],
      },
    ]);
    assert.ok(
      objects.some(
        (object) => object.kind === 'ClusterRoleBinding' && object.metadata.name === role?.metadata.name,
      ),
    );
    const args = objects.find((object) => object.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]
      ?.args;
    assert.ok(args?.includes('--audit-policy-reports=true'));
    // The operator reads the chart's flags as it means them (its environment fills the namespace).
    const parsed = parseOptions(
      (args ?? []).map((arg) => arg.replace('$(POD_NAMESPACE)', 'admission-system')),
      {},
    );
    assert.equal(parsed.help ? undefined : parsed.options.auditPolicyReports, true);
  });
});

describe('the chart’s caller verification and NetworkPolicy, rendered', () => {
  const container = (objects: Rendered[]) => deploymentOf(objects).spec?.template?.spec?.containers?.[0];
  const optionsOf = (objects: Rendered[]): OperatorOptions => {
    const args = (container(objects)?.args ?? []).map((arg) =>
      arg.replace('$(POD_NAMESPACE)', 'admission-system'),
    );
    const parsed = parseOptions(args, {});
    assert.equal(parsed.help, false);
    return (parsed as { options: OperatorOptions }).options;
  };

  it('verifies nobody and grants no TokenReview by default', async () => {
    const objects = await render();
    assert.deepEqual(optionsOf(objects).clientVerification, {
      caFile: undefined,
      subjectNames: [],
      tokenUsers: [],
      trustNetwork: false,
    });
    assert.ok(
      !objects.some((object) =>
        (object.rules ?? []).some((rule) => rule.resources?.includes('tokenreviews')),
      ),
    );
    assert.ok(!objects.some((object) => object.kind === 'NetworkPolicy'));
  });

  it('mounts the client CA (its own ConfigMap from `ca`, or the one named) and passes the names the operator takes', async () => {
    const sets = [
      'clientVerification.certificate.enabled=true',
      'clientVerification.certificate.ca=-----BEGIN CERTIFICATE-----',
      'clientVerification.certificate.subjectNames={kube-apiserver-webhook-client,front-proxy}',
    ];
    const objects = await render(...sets);
    const own = objects.find(
      (object) => object.kind === 'ConfigMap' && object.metadata.name === 'admission-operator-client-ca',
    );
    assert.ok(own, 'the chart holds the CA given inline');
    assert.deepEqual(optionsOf(objects).clientVerification, {
      caFile: '/etc/admission-operator/client-ca/ca.crt',
      subjectNames: ['kube-apiserver-webhook-client', 'front-proxy'],
      tokenUsers: [],
      trustNetwork: false,
    });
    const named = await render(
      'clientVerification.certificate.enabled=true',
      'clientVerification.certificate.caConfigMap=cluster-ca',
      'clientVerification.certificate.caKey=client-ca.pem',
      'clientVerification.certificate.subjectNames={kube-apiserver-webhook-client}',
    );
    const volumes = deploymentOf(named).spec?.template?.spec?.volumes as
      { configMap?: { name: string; items: { key: string }[] } }[] | undefined;
    assert.deepEqual(volumes?.[0]?.configMap, {
      name: 'cluster-ca',
      items: [{ key: 'client-ca.pem', path: 'client-ca.pem' }],
    });
    assert.equal(
      optionsOf(named).clientVerification.caFile,
      '/etc/admission-operator/client-ca/client-ca.pem',
    );
    assert.ok(!named.some((object) => object.metadata.name === 'admission-operator-client-ca'));
    assert.match(
      await failure(helm('template', ['--set', 'clientVerification.certificate.enabled=true'])),
      /subjectNames': minItems: got 0, want 1/,
    );
  });

  it('verifies tokens of the users named, with tokenreviews create', async () => {
    const objects = await render(
      'clientVerification.token.enabled=true',
      'clientVerification.token.users={system:serviceaccount:kube-system:apiserver}',
    );
    assert.deepEqual(optionsOf(objects).clientVerification.tokenUsers, [
      'system:serviceaccount:kube-system:apiserver',
    ]);
    assert.ok(
      objects.some((object) =>
        (object.rules ?? []).some(
          (rule) => rule.resources?.includes('tokenreviews') && rule.verbs.includes('create'),
        ),
      ),
    );
  });

  it('trusts the network for quota only with the NetworkPolicy restricting 9443, and never beside a verification', async () => {
    const objects = await render(
      'clientVerification.network.enabled=true',
      'networkPolicy.enabled=true',
      'networkPolicy.admission.from[0].ipBlock.cidr=10.0.0.0/24',
    );
    assert.equal(optionsOf(objects).clientVerification.trustNetwork, true);
    assert.ok(objects.some((object) => object.kind === 'NetworkPolicy'));
    assert.equal(optionsOf(await render()).clientVerification.trustNetwork, false);
    const refused: [string, string[], RegExp][] = [
      ['without the NetworkPolicy', [], /networkPolicy|enabled/],
      ['with a NetworkPolicy open to every source', ['networkPolicy.enabled=true'], /from|minItems/],
      [
        'beside token verification',
        [
          'networkPolicy.enabled=true',
          'networkPolicy.admission.from[0].ipBlock.cidr=10.0.0.0/24',
          'clientVerification.token.enabled=true',
          'clientVerification.token.users={apiserver}',
        ],
        /token|enabled/,
      ],
    ];
    for (const [what, sets, message] of refused) {
      const args = ['clientVerification.network.enabled=true', ...sets].flatMap((set) => ['--set', set]);
      assert.match(await failure(helm('template', args)), message, what);
      // Past the schema, the template refuses it too.
      const unchecked = await failure(helm('template', [...args, '--skip-schema-validation']));
      assert.match(unchecked, /clientVerification\.network\.enabled/, `${what}, without the schema`);
    }
  });

  it('lets the API server’s sources and the other replicas reach 9443, and only the monitoring sources the metrics', async () => {
    const stdout = await helm('template', [
      '--set',
      'networkPolicy.enabled=true',
      '--set-json',
      'networkPolicy.admission.from=[{"ipBlock":{"cidr":"10.0.0.0/24"}}]',
      '--set-json',
      'networkPolicy.metrics.from=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}]',
    ]);
    const policy = parseAllDocuments(stdout)
      .map(
        (doc) =>
          doc.toJS() as Rendered & { spec?: { ingress?: { ports: { port: string }[]; from: object[] }[] } },
      )
      .find((object) => object.kind === 'NetworkPolicy');
    assert.deepEqual(
      policy?.spec?.ingress?.map((rule) => [rule.ports[0]?.port, rule.from]),
      [
        [
          'https',
          [
            {
              podSelector: {
                matchLabels: {
                  'app.kubernetes.io/name': 'admission-operator',
                  'app.kubernetes.io/instance': 'admission-operator',
                },
              },
            },
            { ipBlock: { cidr: '10.0.0.0/24' } },
          ],
        ],
        [
          'metrics',
          [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ],
      ],
    );
  });
});
