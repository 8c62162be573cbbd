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
import { parseOptions } from '../../operator/config/options.js';
import { ensureBinaries } from '../../scripts/cluster/binaries.js';
import { binaries, repoRoot } from '../../scripts/cluster/layout.js';

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
    template?: { spec?: { containers?: { args?: string[] }[] } };
    ports?: { name: string; port: number }[];
    selector?: { matchLabels?: Record<string, string> };
    groups?: { rules: { expr: string }[] }[];
  };
  rules?: { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }[];
}

/** The chart's objects for `helm template` with `--set` values. */
async function render(...sets: string[]): Promise<Rendered[]> {
  await ensureBinaries(() => undefined);
  const { stdout } = await execFileAsync(
    binaries.helm,
    [
      'template',
      'admission-operator',
      chart,
      '-n',
      'admission-system',
      ...sets.flatMap((set) => ['--set', set]),
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Rendered | null)
    .filter((object): object is Rendered => object !== null);
}

describe('the chart, rendered', () => {
  it('grants the ClusterRole get, list and watch on every kind the periodic audit lists', async () => {
    const clusterRole = (await render()).find((object) => object.kind === 'ClusterRole');
    assert.ok(clusterRole?.rules, 'a ClusterRole is rendered');
    for (const kind of AUDITED_KINDS) {
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
        assert.ok(granted.has(verb), `ClusterRole grants ${verb} on ${kind.plural}.${kind.group || 'core'}`);
      }
    }
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

  it('renders the project’s CRDs, kept on uninstall by default, and none with crds.enabled=false', async () => {
    const files = (await readdir(join(repoRoot, 'crds'))).filter((file) => file.endsWith('.yaml')).sort();
    const crds = (await render()).filter((object) => object.kind === 'CustomResourceDefinition');
    assert.deepEqual(crds.map((crd) => `${crd.metadata.name}.yaml`).sort(), files);
    for (const crd of crds) {
      assert.equal(
        crd.metadata.annotations?.['helm.sh/resource-policy'],
        'keep',
        `${crd.metadata.name} is kept`,
      );
      const source = parse(
        await readFile(join(repoRoot, 'crds', `${crd.metadata.name}.yaml`), 'utf8'),
      ) as Rendered;
      assert.deepEqual(crd.spec, source.spec, `${crd.metadata.name} is the project's CRD`);
    }
    const unkept = (await render('crds.keep=false')).filter(
      (object) => object.kind === 'CustomResourceDefinition',
    );
    assert.equal(unkept.length, files.length);
    assert.ok(unkept.every((crd) => crd.metadata.annotations?.['helm.sh/resource-policy'] === undefined));
    const none = (await render('crds.enabled=false')).filter(
      (object) => object.kind === 'CustomResourceDefinition',
    );
    assert.deepEqual(none, []);
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
        `charts/admission-operator/files/policy-report-crds/${file} differs from crds/policy-reports/${file}`,
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
