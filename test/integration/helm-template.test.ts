/**
 * The chart as `helm template` renders it, checked against what the operator needs and what a
 * cluster admin installing it expects: the parts that need no cluster to show a defect.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { AUDITED_KINDS } from '../../operator/audit/audited-objects.js';
import { parseOptions } from '../../operator/config/options.js';
import { ensureBinaries } from '../../scripts/cluster/binaries.js';
import { binaries, repoRoot } from '../../scripts/cluster/layout.js';

const execFileAsync = promisify(execFile);
const chart = join(repoRoot, 'charts', 'admission-operator');

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown> & {
    template?: { spec?: { containers?: { args?: string[] }[] } };
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
});
