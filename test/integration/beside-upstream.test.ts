/**
 * The chart beside Koordinator v1.8.0's official chart and Kthena v1.0.0's, as their users install
 * them (docs/beside-upstream.md), with plain Helm on the local control plane: no node, so every
 * pod stays Pending and nothing is installed with --wait. In each install order and each uninstall
 * order every install, upgrade and uninstall succeeds, and no CRD or custom resource of either side
 * is lost or changes owner; a cluster where this chart installed the CRDs alone hands them over
 * along the documented path; an Argo CD-shaped run (each chart rendered with `helm template` and
 * applied server-side by an app of its own, then one app pruned) loses nothing of another app.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { kubectl, uniqueSuffix, waitFor } from '../harness/cluster.js';
import { KTHENA_CRDS, kthenaChart, kthenaModuleDir } from '../harness/kthena-module.js';
import { koordinatorChart } from '../harness/koord-manager.js';

const execFileAsync = promisify(execFile);
const ours = join(repoRoot, 'charts', 'admission-operator');

/** Kthena's webhooks off: its values for the end of the migration, and what lets objects of its kinds be created with no pod to answer its failurePolicy=Fail webhooks. */
const KTHENA_WEBHOOKS_OFF = [
  'workload.controllerManager.webhook.enabled=false',
  'networking.kthenaRouter.webhook.enabled=false',
];

const KOORDINATOR_CRDS = [
  'elasticquotas.scheduling.sigs.k8s.io',
  'reservations.scheduling.koordinator.sh',
  'clustercolocationprofiles.config.koordinator.sh',
];
/** The eight kinds this chart can install the CRDs of (crds/). */
const SHARED_CRDS = [...KOORDINATOR_CRDS, ...KTHENA_CRDS];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [field: string]: unknown;
}

async function helm(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(await ensureHelm(), [...args, `--kubeconfig=${kubeconfigPath}`], {
    maxBuffer: 64 * 2 ** 20,
  });
}

/** `--set` of each value. */
const set = (...values: string[]): string[] => values.flatMap((value) => ['--set', value]);

/** The stderr of a command that must fail. */
async function failure(command: Promise<unknown>): Promise<string> {
  try {
    await command;
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr ?? error);
  }
  assert.fail('the command succeeded');
}

/** Who a CRD belongs to, as Helm and Argo CD read it; undefined when it does not exist. */
interface Ownership {
  uid: string;
  release: string | undefined;
  keep: boolean;
}

/** Who each CRD belongs to now (undefined: it does not exist), read in one request. */
async function ownerships(names: readonly string[]): Promise<Map<string, Ownership | undefined>> {
  const { stdout } = await kubectl([
    'get',
    'crd',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.metadata.uid}{"\\t"}' +
      '{.metadata.annotations.meta\\.helm\\.sh/release-name}{"\\t"}' +
      '{.metadata.annotations.helm\\.sh/resource-policy}{"\\n"}{end}',
  ]);
  const found = new Map<string, Ownership>();
  for (const line of stdout.split('\n')) {
    const [name = '', uid = '', release = '', policy = ''] = line.split('\t');
    found.set(name, { uid, release: release === '' ? undefined : release, keep: policy === 'keep' });
  }
  return new Map(names.map((name) => [name, found.get(name)]));
}

/** Deletes the CRDs (and so every object of their kinds) and waits until they are gone. */
async function deleteCrds(names: readonly string[]): Promise<void> {
  await kubectl(['delete', 'crd', ...names, '--ignore-not-found', '--wait=true']);
}

/** Waits until each CRD is established (a chart created it: its kind is served). */
async function established(names: readonly string[]): Promise<void> {
  await waitFor(`${names.join(', ')} to be established`, async () => {
    const { stdout } = await kubectl([
      'get',
      'crd',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}{"="}{.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}',
    ]);
    const ready = new Set(
      stdout
        .split('\n')
        .filter((line) => line.endsWith('=True'))
        .map((line) => line.split('=')[0]),
    );
    return names.every((name) => ready.has(name)) || undefined;
  });
}

/** One object of each kind, Kthena's taken from its module's own examples. */
async function customResources(namespace: string, suffix: string): Promise<Manifest[]> {
  const kthena = await kthenaModuleDir();
  const wanted = new Set(['ModelBooster', 'AutoscalingPolicy', 'ModelServing', 'ModelRoute', 'ModelServer']);
  const objects: Manifest[] = [
    {
      apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
      kind: 'ElasticQuota',
      metadata: { name: `quota-${suffix}`, namespace },
      spec: { min: { cpu: '1' }, max: { cpu: '2' } },
    },
    {
      apiVersion: 'scheduling.koordinator.sh/v1alpha1',
      kind: 'Reservation',
      metadata: { name: `reservation-${suffix}` },
      spec: {
        template: { spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] } },
        owners: [{ object: { name: 'app' } }],
      },
    },
    {
      apiVersion: 'config.koordinator.sh/v1alpha1',
      kind: 'ClusterColocationProfile',
      metadata: { name: `profile-${suffix}` },
      spec: { selector: { matchLabels: { app: `beside-${suffix}` } } },
    },
  ];
  const files = (await readdir(join(kthena, 'examples'), { recursive: true }))
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(join(kthena, 'examples', file), 'utf8'))) {
      const object = document.toJS() as Manifest | null;
      if (!object || !wanted.has(object.kind) || !object.apiVersion.includes('.serving.volcano.sh/'))
        continue;
      wanted.delete(object.kind);
      objects.push({ ...object, metadata: { name: `${object.kind.toLowerCase()}-${suffix}`, namespace } });
    }
  }
  assert.equal(wanted.size, 0, `Kthena's examples have every kind (missing: ${[...wanted].join(', ')})`);
  return objects;
}

/** Creates the objects; resolves with their uids, by kind. */
async function create(objects: readonly Manifest[]): Promise<Map<string, string>> {
  await kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  const uids = await uidsNow(objects);
  assert.equal(uids.size, objects.length, 'every object was created');
  return uids;
}

/** The uids of the objects as they are now, by kind (absent: not there), read in one request. */
async function uidsNow(objects: readonly Manifest[]): Promise<Map<string, string>> {
  if (objects.length === 0) return new Map();
  const { stdout } = await kubectl(
    [
      'get',
      '--ignore-not-found',
      '-o',
      'jsonpath={range .items[*]}{.kind}{"\\t"}{.metadata.uid}{"\\n"}{end}',
      '-f',
      '-',
    ],
    // Two objects or more come back as a List (one would come back bare): the first is asked twice.
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...objects, ...objects.slice(0, 1)] }),
  );
  return new Map(
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\t') as [string, string]),
  );
}

const kindsOf = (crds: readonly string[]): Set<string> =>
  new Set(
    crds.map(
      (crd) =>
        ({
          'elasticquotas.scheduling.sigs.k8s.io': 'ElasticQuota',
          'reservations.scheduling.koordinator.sh': 'Reservation',
          'clustercolocationprofiles.config.koordinator.sh': 'ClusterColocationProfile',
          'modelboosters.workload.serving.volcano.sh': 'ModelBooster',
          'autoscalingpolicies.workload.serving.volcano.sh': 'AutoscalingPolicy',
          'modelservings.workload.serving.volcano.sh': 'ModelServing',
          'modelroutes.networking.serving.volcano.sh': 'ModelRoute',
          'modelservers.networking.serving.volcano.sh': 'ModelServer',
        })[crd] ?? crd,
    ),
  );

/** One object of each kind created, and each CRD as it was then. */
interface Populated {
  objects: readonly Manifest[];
  created: ReadonlyMap<string, string>;
  before: ReadonlyMap<string, Ownership | undefined>;
}

/** Creates one object of each kind in `objects` and records the CRDs as they are. */
async function populate(objects: readonly Manifest[]): Promise<Populated> {
  const created = await create(objects);
  return { objects, created, before: await ownerships(SHARED_CRDS) };
}

/**
 * Asserts each of `crds` is the same object as before with the same owner, and the object of its
 * kind is the very one created (same uid).
 */
async function intact(state: Populated, crds: readonly string[], when: string): Promise<void> {
  const after = await ownerships(crds);
  for (const crd of crds) assert.deepEqual(after.get(crd), state.before.get(crd), `${crd} ${when}`);
  const kinds = kindsOf(crds);
  const now = await uidsNow(state.objects.filter((object) => kinds.has(object.kind)));
  for (const kind of kinds) assert.equal(now.get(kind), state.created.get(kind), `${kind} survives ${when}`);
}

/** The CRDs a release's manifest holds. */
async function releaseCrds(release: string, namespace: string): Promise<string[]> {
  const { stdout } = await helm(['get', 'manifest', release, '-n', namespace]);
  return parseAllDocuments(stdout)
    .map((document) => document.toJS() as Manifest | null)
    .filter((object): object is Manifest => object?.kind === 'CustomResourceDefinition')
    .map((object) => object.metadata.name);
}

/** A scenario's releases and namespaces, uninstalled and deleted when the test ends whatever happened. */
function scenario(t: TestContext) {
  const suffix = uniqueSuffix();
  const names = {
    suffix,
    ours: `ours-${suffix}`,
    oursNamespace: `admission-${suffix}`,
    koordinator: `koordinator-${suffix}`,
    koordinatorNamespace: `koordinator-${suffix}`,
    kthena: `kthena-${suffix}`,
    kthenaNamespace: `kthena-${suffix}`,
    objects: `objects-${suffix}`,
  };
  t.after(async () => {
    for (const [release, namespace] of [
      [names.ours, names.oursNamespace],
      [names.koordinator, 'default'],
      [names.kthena, names.kthenaNamespace],
    ] as const) {
      await helm(['uninstall', release, '-n', namespace]).catch(() => undefined);
    }
    await kubectl([
      'delete',
      'namespace',
      names.oursNamespace,
      names.kthenaNamespace,
      names.koordinatorNamespace,
      names.objects,
      '--ignore-not-found',
      '--wait=false',
    ]).catch(() => undefined);
    await kubectl([
      'delete',
      'reservations.scheduling.koordinator.sh,clustercolocationprofiles.config.koordinator.sh',
      '-l',
      `beside=${suffix}`,
      '--ignore-not-found',
    ]).catch(() => undefined);
  });
  const releases = {
    ours: { release: names.ours, namespace: names.oursNamespace, chart: () => Promise.resolve(ours) },
    koordinator: {
      release: names.koordinator,
      namespace: 'default',
      chart: () => Promise.resolve(koordinatorChart),
    },
    kthena: { release: names.kthena, namespace: names.kthenaNamespace, chart: kthenaChart },
  };
  type App = keyof typeof releases;
  /** helm install, creating the namespace (Koordinator's chart creates its own, named here); `flags` last. */
  const install = async (app: App, ...flags: string[]) => {
    const { release, namespace, chart } = releases[app];
    const own = app === 'koordinator' ? set(`installation.namespace=${names.koordinatorNamespace}`) : [];
    return helm(['install', release, await chart(), '-n', namespace, '--create-namespace', ...own, ...flags]);
  };
  /** helm upgrade with the values in force, and `flags`. */
  const upgrade = async (app: App, ...flags: string[]) => {
    const { release, namespace, chart } = releases[app];
    return helm(['upgrade', release, await chart(), '-n', namespace, '--reuse-values', ...flags]);
  };
  const uninstall = (app: App) => helm(['uninstall', releases[app].release, '-n', releases[app].namespace]);
  /** Our release is installed and its Deployment exists. */
  const oursIntact = async (when: string): Promise<void> => {
    const { stdout } = await helm(['status', names.ours, '-n', names.oursNamespace, '-o', 'json']);
    assert.equal((JSON.parse(stdout) as { info: { status: string } }).info.status, 'deployed', when);
    await kubectl(['get', 'deployment', names.ours + '-admission-operator', '-n', names.oursNamespace]);
  };
  /** The objects, labelled for the cleanup, in a namespace of the scenario's own. */
  const objects = async (): Promise<Manifest[]> => {
    await kubectl(['create', 'namespace', names.objects]).catch(() => undefined);
    return (await customResources(names.objects, suffix)).map((object) => ({
      ...object,
      metadata: { ...object.metadata, labels: { beside: suffix } },
    }));
  };
  /**
   * Once both upstream charts are in: one object of each kind created, and each CRD as it is then,
   * Koordinator's three its release's, Kthena's five no release's (its crds/ sets no owner).
   */
  const populated = async (): Promise<Populated> => {
    await established(SHARED_CRDS);
    const state = await populate(await objects());
    for (const crd of KOORDINATOR_CRDS) assert.equal(state.before.get(crd)?.release, names.koordinator, crd);
    for (const crd of KTHENA_CRDS) assert.equal(state.before.get(crd)?.release, undefined, crd);
    return state;
  };
  return { names, install, upgrade, uninstall, oursIntact, objects, populated };
}

/**
 * A cluster where neither project's CRDs exist, as before either is installed (an earlier test may
 * have applied the project's, a failed run left Koordinator's): the eight, and every other CRD of
 * Koordinator's chart (templates/crd/<group>_<plural>.yaml), but for `kept`.
 */
async function cleanSlate(kept: readonly string[] = []): Promise<void> {
  const koordinators = (await readdir(join(koordinatorChart, 'templates', 'crd')))
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => {
      const [group, plural] = file.replace(/\.yaml$/, '').split('_');
      return `${plural}.${group}`;
    });
  await deleteCrds([...new Set([...SHARED_CRDS, ...koordinators])].filter((crd) => !kept.includes(crd)));
}

describe('beside Koordinator’s and Kthena’s charts', { concurrency: false }, () => {
  it('finds both upstream charts', async () => {
    await access(join(koordinatorChart, 'Chart.yaml')).catch(() => {
      assert.fail(`Koordinator v1.8.0's chart is not at ${koordinatorChart} (set KOORDINATOR_CHART)`);
    });
    await access(join(await kthenaChart(), 'Chart.yaml'));
  });

  it('in each install order and each uninstall order every step succeeds, and nothing of either side is lost or changes owner', async (t) => {
    await cleanSlate();
    const s = scenario(t);
    // Ours first: it renders no CRD, so theirs install as they come.
    await s.install('ours');
    assert.deepEqual(await releaseCrds(s.names.ours, s.names.oursNamespace), []);
    for (const [crd, owner] of await ownerships(SHARED_CRDS)) assert.equal(owner, undefined, crd);
    await s.install('koordinator');
    // Kthena as its users install it (webhooks on), then with its webhooks off (the migration's switch).
    await s.install('kthena');
    await s.upgrade('kthena', ...set(...KTHENA_WEBHOOKS_OFF));
    const state = await s.populated();
    await s.upgrade('ours', ...set('logLevel=debug'));
    await s.upgrade('koordinator');
    await intact(state, SHARED_CRDS, 'after every upgrade');

    // Ours uninstalled first, then installed after theirs.
    await s.uninstall('ours');
    await intact(state, SHARED_CRDS, 'after our uninstall');
    await s.install('ours');
    assert.deepEqual(await releaseCrds(s.names.ours, s.names.oursNamespace), []);
    await intact(state, SHARED_CRDS, 'after our install beside theirs');

    // Theirs uninstalled first: our release is untouched. Koordinator's chart deletes its own CRDs,
    // and every object of their kinds, with its release; Kthena's never deletes them.
    await s.uninstall('koordinator');
    await s.oursIntact('after Koordinator’s uninstall');
    await s.uninstall('kthena');
    await s.oursIntact('after Kthena’s uninstall');
    await intact(state, KTHENA_CRDS, 'after Kthena’s uninstall');
    await s.uninstall('ours');
    await intact(state, KTHENA_CRDS, 'after our uninstall');
  });

  it('as Argo CD: each chart rendered with helm template and applied by its own app, one app pruned, nothing of another lost', async (t) => {
    // Kthena's CRDs as its chart left them (it never deletes them): its app applies the same.
    await cleanSlate(KTHENA_CRDS);
    const s = scenario(t);
    /**
     * `helm template`, read as the API server would: kubectl parses it (some of Koordinator's CRD
     * descriptions are plain YAML scalars a strict YAML 1.2 parser splits into keys).
     */
    const render = async (app: string, namespace: string, args: string[]): Promise<Manifest[]> => {
      const { stdout } = await helm(['template', app, ...args, '-n', namespace]);
      const { stdout: converted } = await kubectl(
        ['create', '--dry-run=client', '--validate=false', '-o', 'yaml', '-f', '-'],
        stdout,
      );
      return parseAllDocuments(converted)
        .map((document) => document.toJS() as Manifest | null)
        .filter((object): object is Manifest => object !== null)
        .map((object) => ({
          ...object,
          metadata: {
            ...object.metadata,
            ...(object.metadata.namespace || !namespaced(object) ? {} : { namespace }),
          },
        }));
    };
    const apps = {
      ours: await render(s.names.ours, s.names.oursNamespace, [ours]),
      koordinator: await render(s.names.koordinator, 'default', [
        koordinatorChart,
        ...set(`installation.namespace=${s.names.koordinatorNamespace}`),
      ]),
      // Argo CD applies a chart's crds/ folder too.
      kthena: await render(s.names.kthena, s.names.kthenaNamespace, [
        await kthenaChart(),
        '--include-crds',
        ...set(...KTHENA_WEBHOOKS_OFF),
      ]),
    };
    assert.deepEqual(
      apps.ours.filter((object) => object.kind === 'CustomResourceDefinition'),
      [],
      'our app renders no CRD',
    );
    await kubectl(['create', 'namespace', s.names.oursNamespace]);
    await kubectl(['create', 'namespace', s.names.kthenaNamespace]);
    /** Applied server-side as an app of its own: its field manager and Argo CD's tracking annotation. */
    const sync = async (app: keyof typeof apps): Promise<void> => {
      const tracked = apps[app].map((object) => ({
        ...object,
        metadata: {
          ...object.metadata,
          annotations: {
            ...object.metadata.annotations,
            'argocd.argoproj.io/tracking-id': trackingId(app, object),
          },
        },
      }));
      // CRDs first, as Argo CD's sync waves order them.
      for (const batch of [
        tracked.filter((object) => object.kind === 'CustomResourceDefinition' || object.kind === 'Namespace'),
        tracked.filter((object) => object.kind !== 'CustomResourceDefinition' && object.kind !== 'Namespace'),
      ]) {
        if (batch.length === 0) continue;
        await kubectl(
          ['apply', '--server-side', `--field-manager=argocd-${app}`, '-f', '-'],
          JSON.stringify({ apiVersion: 'v1', kind: 'List', items: batch }),
        );
        await established(
          batch.filter((object) => object.kind === 'CustomResourceDefinition').map((o) => o.metadata.name),
        );
      }
    };
    /**
     * Deletes every object the app tracks in `live` (the objects' tracking ids as last read): what
     * deleting the Application with its resources does.
     */
    const prune = async (app: keyof typeof apps, live: ReadonlyMap<string, string>): Promise<void> => {
      const all = [...apps.koordinator, ...apps.kthena, ...apps.ours];
      const mine = all.filter((object) => live.get(key(object))?.startsWith(`${app}:`));
      await kubectl(
        ['delete', '--wait=false', '--ignore-not-found', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items: mine }),
      );
    };
    t.after(async () => {
      const live = await trackingIds([...apps.koordinator, ...apps.kthena, ...apps.ours]);
      for (const app of ['ours', 'koordinator', 'kthena'] as const)
        await prune(app, live).catch(() => undefined);
    });

    await sync('koordinator');
    await sync('kthena');
    await sync('ours');
    const state = await populate(await s.objects());
    const all = [...apps.koordinator, ...apps.kthena, ...apps.ours];
    const trackedBefore = await trackingIds(all);
    for (const crd of KOORDINATOR_CRDS)
      assert.match(trackedBefore.get(`CustomResourceDefinition//${crd}`) ?? '', /^koordinator:/);
    for (const crd of KTHENA_CRDS)
      assert.match(trackedBefore.get(`CustomResourceDefinition//${crd}`) ?? '', /^kthena:/);

    await prune('ours', trackedBefore);
    await intact(state, SHARED_CRDS, 'after our app was pruned');
    const trackedAfter = await trackingIds([...apps.koordinator, ...apps.kthena]);
    assert.deepEqual(trackedAfter, new Map([...trackedBefore].filter(([, id]) => !id.startsWith('ours:'))));

    // Back, then Koordinator's app pruned: ours and Kthena's keep everything.
    await sync('ours');
    const oursLive = await trackingIds(apps.ours);
    await prune('koordinator', trackedAfter);
    await waitFor('Koordinator’s CRDs to be deleted with its app', async () => {
      const { stdout } = await kubectl([
        'get',
        'crd',
        ...KOORDINATOR_CRDS,
        '--ignore-not-found',
        '-o',
        'jsonpath={range .items[*]}{.metadata.deletionTimestamp}{"\\n"}{end}',
      ]);
      // Each CRD still there prints its deletionTimestamp on a line of its own.
      return (
        stdout
          .split('\n')
          .slice(0, -1)
          .every((line) => line !== '') || undefined
      );
    });
    assert.deepEqual(await trackingIds(apps.ours), oursLive, 'every object of our app is still there');
    await intact(state, KTHENA_CRDS, 'after Koordinator’s app was pruned');
  });
  it('ours alone with crds.enabled, then Koordinator and Kthena: the CRDs are handed over as documented, no object lost', async (t) => {
    await cleanSlate();
    const s = scenario(t);
    await s.install('ours', ...set('crds.enabled=true'));
    assert.deepEqual(
      (await releaseCrds(s.names.ours, s.names.oursNamespace)).sort(),
      [...SHARED_CRDS].sort(),
    );
    await established(SHARED_CRDS);
    const state = await populate(await s.objects());
    for (const [crd, owner] of state.before) {
      assert.equal(owner?.release, s.names.ours, crd);
      assert.equal(owner?.keep, true, crd);
    }

    // Koordinator's chart as it comes refuses CRDs another release owns.
    assert.match(await failure(s.install('koordinator')), /invalid ownership metadata/);

    // The documented path: ours stops rendering them (kept by policy), Koordinator takes them.
    await s.upgrade('ours', ...set('crds.enabled=false'));
    assert.deepEqual(await releaseCrds(s.names.ours, s.names.oursNamespace), []);
    await intact(state, SHARED_CRDS, 'after our upgrade to crds.enabled=false');
    await s.install('koordinator', '--take-ownership');
    await s.install('kthena');
    // Nothing claims Kthena's: its chart never manages CRDs. Our marks come off them.
    await kubectl([
      'annotate',
      'crd',
      ...KTHENA_CRDS,
      'meta.helm.sh/release-name-',
      'meta.helm.sh/release-namespace-',
      'helm.sh/resource-policy-',
      'argocd.argoproj.io/sync-options-',
    ]);
    await kubectl(['label', 'crd', ...KTHENA_CRDS, 'app.kubernetes.io/managed-by-']);

    const handed = { ...state, before: await ownerships(SHARED_CRDS) };
    for (const crd of SHARED_CRDS) {
      assert.equal(handed.before.get(crd)?.uid, state.before.get(crd)?.uid, `${crd} is the same CRD`);
    }
    for (const crd of KOORDINATOR_CRDS) {
      assert.equal(handed.before.get(crd)?.release, s.names.koordinator, crd);
    }
    for (const crd of KTHENA_CRDS) assert.equal(handed.before.get(crd)?.release, undefined, crd);
    assert.deepEqual(await uidsNow(state.objects), state.created, 'every object survives the handover');

    await s.uninstall('ours');
    await intact(handed, SHARED_CRDS, 'after our uninstall');
    await s.uninstall('kthena');
    await intact(handed, SHARED_CRDS, 'after Kthena’s uninstall');
    // Koordinator's three are its own now: its uninstall deletes them, as every CRD of its chart (Helm
    // reads the keep policy from the release's manifest, not from the annotation ours left on them).
    await s.uninstall('koordinator');
    await waitFor(
      'Koordinator’s CRDs to go with its release',
      async () =>
        [...(await ownerships(KOORDINATOR_CRDS)).values()].every((owner) => owner === undefined) || undefined,
    );
    await intact(handed, KTHENA_CRDS, 'after Koordinator’s uninstall');
  });
});

/** Kinds that live in a namespace, among those the three charts render. */
function namespaced(object: Manifest): boolean {
  return ![
    'Namespace',
    'CustomResourceDefinition',
    'ClusterRole',
    'ClusterRoleBinding',
    'MutatingWebhookConfiguration',
    'ValidatingWebhookConfiguration',
    'PriorityClass',
  ].includes(object.kind);
}

const group = (object: Manifest): string =>
  object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
const key = (object: Manifest): string =>
  `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** Argo CD's annotation tracking: `<app>:<group>/<kind>:<namespace>/<name>`. */
function trackingId(app: string, object: Manifest): string {
  return `${app}:${group(object)}/${object.kind}:${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

/** The live tracking annotation of each object that exists, by key. */
async function trackingIds(objects: readonly Manifest[]): Promise<Map<string, string>> {
  const { stdout } = await kubectl(
    [
      'get',
      '--ignore-not-found',
      '-o',
      'jsonpath={range .items[*]}{.kind}{"/"}{.metadata.namespace}{"/"}{.metadata.name}{"\\t"}' +
        '{.metadata.annotations.argocd\\.argoproj\\.io/tracking-id}{"\\n"}{end}',
      '-f',
      '-',
    ],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  const live = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [object = '', id = ''] = line.split('\t');
    if (id !== '') live.set(object, id);
  }
  return live;
}
