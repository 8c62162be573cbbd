/**
 * `npm run bench -- fuzz-memory`: the operator's memory under hostile load, measured the same way
 * each time. The operator runs as the image runs it (the bundle, the Dockerfile's node flags and
 * ENV, the chart's container environment; the chart's heap percentage applied to the chart's
 * memory limit, which Node would read from the container's cgroup) on the local control plane,
 * which holds the fuzz world (test/fuzz/world.ts) as objects. It is driven phase by phase by the
 * fuzzer's case families: valid reviews of every path, rounds of mutated reviews, broken
 * envelopes with transport abuse (oversized and just-under-the-limit bodies, chunked, dribbled
 * and stalled senders, lengths declared past the limit, callers hanging up) and a burst of bodies
 * just under the limit, many at once, with probes (/healthz, /metrics) throughout; then 20,000
 * admitted pods with 253-character names through the quota ledger, and idle until the ledger has
 * released them (they are never created: released once the pod watch is current 65 s past their
 * admission, at the next bookmark). docs/performance/memory.md has what it measured.
 *
 * Memory is read from outside at each mark: the resident set from /proc/<pid>/status, the heap
 * and buffer figures from a probe loaded into the process (memory-probe.ts, over IPC), which also
 * forces the collections. Every figure is printed; the targets are the (every mark at most
 * 60 % of the chart's memory limit; heap limit plus the non-heap peak at most 90 % of it).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { Agent, get as httpsGet } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RESERVATION_SETTLE_MS } from '../../operator/store/quota-usage.js';
import { fileURLToPath } from 'node:url';
import {
  CoreV1Api,
  CustomObjectsApi,
  SchedulingV1Api,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { parseQuantity } from '../../webhook/util/quantity.js';
import { QUOTA_ANNOTATIONS, QUOTA_LABELS } from '../../webhook/rules/koordinator/quota/keys.js';
import { clusterKubeConfig, installCrds } from '../harness/cluster.js';
import { chartContainer, underLimit } from './chart-container.js';
import { deleteConfigurations } from '../harness/operator.js';
import { admissionRequest, reviewBody } from '../harness/requests.js';
import type { StateFixture } from '../harness/state.js';
import type { HttpResult } from '../fuzz/checks.js';
import { sendCase } from '../fuzz/client.js';
import { generateCase, MIB, type FuzzCase } from '../fuzz/generate.js';
import { seeds } from '../fuzz/seeds.js';
import { fuzzFeatureGates, fuzzStateFixture, OPERATOR_NAMESPACE, TIER_MAPPING_YAML } from '../fuzz/world.js';
import type { ProbeAnswer, ProbeRequest } from './memory-probe.js';
import { inform, record } from './report.js';
import { startCompiledOperator, type RunningOperator } from './state-cluster.js';

export interface FuzzMemorySettings {
  /** Valid reviews, round-robin over the fuzz corpus's seeds (every path). */
  valid: number;
  /** Cases generated per mutation round; the round sends the mutated ones among them. */
  casesPerRound: number;
  rounds: number;
  /** Admitted pods (253-character names) through the quota ledger. */
  ledgerPods: number;
  /** Bodies just under the 7 MiB limit, accepted and judged, spread through the transport phase. */
  largeBodies: number;
  /** Then a burst of such bodies, `burstConcurrency` at once: what the body budget lets in. */
  burst: number;
  burstConcurrency: number;
  /**
   * The longest idle before the last marks, waiting for the ledger to release the reservations of
   * pods never created: RESERVATION_SETTLE_MS past the last admission, then the pod watch's next
   * bookmark (each minute on 1.37; 1.30 sends the pod watch none until a pod changes).
   */
  idleMs: number;
  concurrency: number;
  seed: number;
  /** Added to the operator's environment and node flags (to compare allocator and V8 settings). */
  childEnv: Record<string, string>;
  childNodeFlags: string[];
  /** The memory limit to size against; the chart's default when undefined. */
  memoryLimitBytes: number | undefined;
  /** At each mark, glibc's own figures and what malloc_trim(0) gives back (gdb; changes what follows). */
  mallocProbe: boolean;
}

export const FUZZ_MEMORY_DEFAULTS: FuzzMemorySettings = {
  valid: 20_000,
  casesPerRound: 20_000,
  rounds: 3,
  ledgerPods: 20_000,
  largeBodies: 64,
  burst: 48,
  burstConcurrency: 24,
  idleMs: RESERVATION_SETTLE_MS + 90_000,
  concurrency: 8,
  seed: 1,
  childEnv: {},
  childNodeFlags: [],
  memoryLimitBytes: undefined,
  mallocProbe: false,
};

/**
 * The suite's flags: --valid, --cases (per round), --mutation-rounds, --ledger-pods,
 * --large-bodies, --burst, --burst-concurrency, --idle (ms), --concurrency, --seed, --memory-limit (a quantity),
 * --child-env=KEY=value;KEY=value and --child-node-flags=--flag,--flag (added to the operator's),
 * --malloc-probe=true (a diagnosis, not a measurement: see mallocProbe).
 */
export function fuzzMemorySettings(flags: ReadonlyMap<string, string>): FuzzMemorySettings {
  const count = (name: string, fallback: number): number => {
    const value = Number(flags.get(name) ?? fallback);
    if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a non-negative integer`);
    return value;
  };
  const env: Record<string, string> = {};
  for (const assignment of (flags.get('child-env') ?? '').split(';').filter(Boolean)) {
    const at = assignment.indexOf('=');
    if (at <= 0) throw new Error(`--child-env takes KEY=value;KEY=value, got ${JSON.stringify(assignment)}`);
    env[assignment.slice(0, at)] = assignment.slice(at + 1);
  }
  const limit = flags.get('memory-limit');
  const defaults = FUZZ_MEMORY_DEFAULTS;
  return {
    valid: count('valid', defaults.valid),
    casesPerRound: count('cases', defaults.casesPerRound),
    rounds: count('mutation-rounds', defaults.rounds),
    ledgerPods: count('ledger-pods', defaults.ledgerPods),
    largeBodies: count('large-bodies', defaults.largeBodies),
    burst: count('burst', defaults.burst),
    burstConcurrency: Math.max(1, count('burst-concurrency', defaults.burstConcurrency)),
    idleMs: count('idle', defaults.idleMs),
    concurrency: Math.max(1, count('concurrency', defaults.concurrency)),
    seed: count('seed', defaults.seed),
    childEnv: env,
    childNodeFlags: (flags.get('child-node-flags') ?? '').split(',').filter(Boolean),
    memoryLimitBytes: limit === undefined ? undefined : Number(parseQuantity(limit) / 1_000_000_000n),
    mallocProbe: flags.get('malloc-probe') === 'true',
  };
}

const MiB = 2 ** 20;
const PROBE = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));
/** The quota the ledger phase admits into, with room for every pod. */
const LEDGER_QUOTA = 'bench-ledger';
const LEDGER_NAMESPACE = 'plain';
/** After a forced collection, V8 returns pages to the system on its own threads. */
const AFTER_GC_MS = 1000;

const created = async (make: () => Promise<unknown>): Promise<void> => {
  try {
    await make();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
};

/** The fuzz world's objects as the API server would hold them (what the bench creates). */
function worldObjects(fixture: StateFixture): KubernetesObject[] {
  const objects: KubernetesObject[] = [];
  const namespaces = new Set<string>(['quotas']);
  for (const { name, labels } of fixture.namespaces ?? []) {
    namespaces.add(name);
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...labels } } });
  }
  for (const name of namespaces) {
    if (!(fixture.namespaces ?? []).some((ns) => ns.name === name))
      objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const { namespace, name, data } of fixture.configMaps ?? []) {
    objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace, name },
      data: { ...data },
    } as KubernetesObject);
  }
  objects.push({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: OPERATOR_NAMESPACE, name: 'gpu-tier-mapping' },
    data: { 'mapping.yaml': TIER_MAPPING_YAML },
  } as KubernetesObject);
  for (const quota of fixture.elasticQuotas ?? []) {
    const labels: Record<string, string> = {};
    if (quota.isParent) labels[QUOTA_LABELS.isParent] = 'true';
    if (quota.parent && quota.parent !== 'root') labels[QUOTA_LABELS.parent] = quota.parent;
    if (quota.treeId) labels[QUOTA_LABELS.treeId] = quota.treeId;
    const annotations: Record<string, string> = {};
    if (quota.namespaces.length > 0)
      annotations[QUOTA_ANNOTATIONS.namespaces] = JSON.stringify(quota.namespaces);
    if (quota.admission) annotations[QUOTA_ANNOTATIONS.admission] = JSON.stringify(quota.admission);
    objects.push({
      apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
      kind: 'ElasticQuota',
      metadata: { namespace: quota.namespace, name: quota.name, labels, annotations },
      spec: { min: { ...quota.min }, max: { ...quota.max } },
    } as KubernetesObject);
  }
  objects.push({
    apiVersion: 'scheduling.sigs.k8s.io/v1alpha1',
    kind: 'ElasticQuota',
    metadata: { namespace: 'quotas', name: LEDGER_QUOTA },
    spec: { min: { cpu: '1' }, max: { cpu: '1000000', memory: '1000Ti' } },
  } as KubernetesObject);
  for (const { name, annotations, spec } of fixture.colocationProfiles ?? []) {
    objects.push({
      apiVersion: 'config.koordinator.sh/v1alpha1',
      kind: 'ClusterColocationProfile',
      metadata: { name, annotations: { ...annotations } },
      spec,
    } as KubernetesObject);
  }
  for (const { name, value } of fixture.priorityClasses ?? []) {
    objects.push({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
    } as KubernetesObject);
  }
  for (const { name, labels } of fixture.nodes ?? []) {
    objects.push({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { ...labels } } });
  }
  return objects;
}

/** Creates the fuzz world in the cluster (what exists already is left as it is). */
async function createWorld(kc: KubeConfig): Promise<void> {
  await installCrds(
    'elasticquotas.scheduling.sigs.k8s.io',
    'clustercolocationprofiles.config.koordinator.sh',
    'reservations.scheduling.koordinator.sh',
  );
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const scheduling = kc.makeApiClient(SchedulingV1Api);
  const objects = worldObjects(fuzzStateFixture());
  // Namespaces first: everything else lives in them.
  for (const object of objects.filter((each) => each.kind === 'Namespace'))
    await created(() => core.createNamespace({ body: object }));
  for (const object of objects) {
    const namespace = object.metadata?.namespace ?? '';
    const [group = '', version = ''] = (object.apiVersion ?? '').split('/');
    if (object.kind === 'ConfigMap')
      await created(() => core.createNamespacedConfigMap({ namespace, body: object }));
    else if (object.kind === 'Node') await created(() => core.createNode({ body: object }));
    else if (object.kind === 'PriorityClass')
      await created(() => scheduling.createPriorityClass({ body: object }));
    else if (object.kind !== 'Namespace') {
      const plural = `${(object.kind ?? '').toLowerCase()}s`.replace(/ys$/, 'ies');
      await created(() =>
        namespace
          ? custom.createNamespacedCustomObject({ group, version, plural, namespace, body: object })
          : custom.createClusterCustomObject({ group, version, plural, body: object }),
      );
    }
  }
}

/** The process's resident memory as the kernel counts it (bytes). */
function procStatus(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number =>
    1024 * Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kib('VmRSS'), hwm: kib('VmHWM'), anon: kib('RssAnon'), file: kib('RssFile') };
}

/**
 * glibc's account of the process's malloc heap (malloc_info's totals: arenas, what they hold from
 * the system, what of that is free, what is mmapped chunk by chunk), then the resident set after
 * malloc_trim(0), which returns every free page of every arena: whatever that gives back is memory
 * the allocator kept after the program freed it. Through gdb, which stops the process for a few
 * seconds; the trim changes what later marks see, so this is a diagnosis run, not a measurement.
 */
function mallocProbe(pid: number): string {
  const file = join(tmpdir(), `admission-malloc-info-${pid}.xml`);
  execFileSync(
    'gdb',
    [
      ...['-p', String(pid), '-batch', '-nx'],
      ...['-ex', `call (void*) fopen("${file}", "w")`, '-ex', 'call (int) malloc_info(0, $1)'],
      ...['-ex', 'call (int) fclose($1)', '-ex', 'call (int) malloc_trim(0)'],
    ],
    { stdio: 'ignore' },
  );
  const xml = readFileSync(file, 'utf8');
  rmSync(file, { force: true });
  const totals = xml.slice(xml.lastIndexOf('</heap>'));
  const size = (pattern: string): number =>
    Number(new RegExp(`<${pattern} size="(\\d+)"`).exec(totals)?.[1] ?? Number.NaN);
  const free = size('total type="fast" count="\\d+"') + size('total type="rest" count="\\d+"');
  return (
    `glibc: ${(xml.match(/<heap nr=/g) ?? []).length} arenas holding ${asMiB(size('system type="current"'))} MiB ` +
    `(${asMiB(free)} MiB of it free), ${asMiB(size('total type="mmap" count="\\d+"'))} MiB in mmapped chunks; ` +
    `RSS after malloc_trim(0) ${asMiB(procStatus(pid).rss)} MiB`
  );
}

/** Asks the probe inside the operator (memory-probe.ts) over the IPC channel. */
class Probe {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: ProbeAnswer) => void>();

  constructor(private readonly operator: RunningOperator) {
    operator.child.on('message', (answer: ProbeAnswer) => {
      this.waiting.get(answer.id)?.(answer);
      this.waiting.delete(answer.id);
    });
  }

  ask(gc: boolean, timeoutMs = 60_000): Promise<ProbeAnswer> {
    const id = this.nextId++;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the memory probe did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolvePromise(answer);
      });
      this.operator.child.send({ id, gc } satisfies ProbeRequest);
    });
  }
}

interface Mark {
  label: string;
  /** As found, before the mark's collection. */
  rss: number;
  /** After a forced full collection. */
  rssAfterGc: number;
  anonAfterGc: number;
  fileAfterGc: number;
  heapUsed: number;
  heapPhysical: number;
  external: number;
  arrayBuffers: number;
  malloced: number;
  ledger: number;
}

/** What came back, per phase: the decisions, the refusals by status, what never answered. */
class Tally {
  readonly counts = new Map<string, number>();

  add(result: HttpResult): void {
    let key: string;
    if (result.status === undefined)
      key = result.timedOut ? 'no answer (client gave up)' : 'closed without an answer';
    else if (result.status !== 200) key = `HTTP ${result.status}`;
    else {
      try {
        const review = JSON.parse(result.body.toString('utf8')) as { response?: { allowed?: boolean } };
        key = review.response?.allowed ? 'allowed' : 'refused';
      } catch {
        key = 'HTTP 200, not a review';
      }
    }
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  toString(): string {
    return [...this.counts]
      .sort((a, b) => b[1] - a[1])
      .map(([key, count]) => `${key} ${count}`)
      .join(', ');
  }
}

async function pool<T>(
  items: Iterable<T>,
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = iterator.next(); !next.done; next = iterator.next()) await task(next.value);
    }),
  );
}

/** A GET answered or not, as a probe sends it: over TLS, with no client certificate, when given a CA. */
function probeGet(port: number, path: string, ca?: string): Promise<void> {
  return new Promise((resolvePromise) => {
    const options = { host: '127.0.0.1', port, path, timeout: 5000 };
    const answered = (res: IncomingMessage): void => {
      res.resume();
      res.on('end', () => {
        resolvePromise();
      });
    };
    const req = ca === undefined ? httpGet(options, answered) : httpsGet({ ...options, ca }, answered);
    req.on('timeout', () => req.destroy());
    req.on('error', () => {
      resolvePromise();
    });
  });
}

/** GET on the metrics port, as text ('' when it fails). */
function metricsPortText(metricsPort: number, path: string): Promise<string> {
  return new Promise<string>((resolvePromise) => {
    let body = '';
    const req = httpGet({ host: '127.0.0.1', port: metricsPort, path, timeout: 10_000 }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolvePromise(body);
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => {
      resolvePromise('');
    });
  });
}

/** The quota ledger's entries, from its gauge (NaN where the operator has none). */
async function ledgerEntries(metricsPort: number): Promise<number> {
  const text = await metricsPortText(metricsPort, '/metrics');
  return Number(/^admission_quota_ledger_entries (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

/**
 * What the bench's quota counts as used (/elasticQuota): its pods are never created, so this is
 * the ledger's reservations. Read once, right after they were made: the read itself drops expired
 * entries where the ledger only forgets on reads.
 */
async function reservedInBenchQuota(metricsPort: number): Promise<string> {
  const text = await metricsPortText(metricsPort, '/elasticQuota');
  try {
    const view = JSON.parse(text) as { used?: Record<string, Record<string, string>> };
    return JSON.stringify(view.used?.[LEDGER_QUOTA] ?? {});
  } catch {
    return '(no answer)';
  }
}

const asMiB = (bytes: number): string => (bytes / MiB).toFixed(0);

export async function benchFuzzMemory(settings: FuzzMemorySettings): Promise<void> {
  execFileSync('npm', ['run', '-s', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  const chart = await chartContainer();
  const limit = settings.memoryLimitBytes ?? chart.memoryLimitBytes;
  const env: Record<string, string> = { ...chart.env, ADMISSION_MEMORY_LIMIT: String(limit) };
  if (env.NODE_OPTIONS !== undefined) env.NODE_OPTIONS = underLimit(env.NODE_OPTIONS, limit);
  Object.assign(env, settings.childEnv);
  inform(`fuzz memory: the chart's memory limit`, limit / MiB, 'MiB');
  console.log(`info  fuzz memory: the operator's environment beyond the image's: ${JSON.stringify(env)}`);

  const kc = await clusterKubeConfig();
  await createWorld(kc);
  await deleteConfigurations();
  const args = [`--feature-gates=${fuzzFeatureGates()}`];
  const extras = {
    nodeFlags: ['--expose-gc', `--import=${PROBE}`, ...settings.childNodeFlags],
    env,
    ipc: true,
  };
  // The first start issues the serving certificates; the measured start finds them in place.
  await (await startCompiledOperator(OPERATOR_NAMESPACE, args, extras)).stop();
  const operator = await startCompiledOperator(OPERATOR_NAMESPACE, args, extras);
  const pid = operator.child.pid ?? 0;
  const probe = new Probe(operator);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: settings.concurrency * 2,
    ca: operator.ca,
    ...operator.client,
  });
  const marks: Mark[] = [];
  const mallocProbeOn = settings.mallocProbe;
  let peakNonHeap = 0;
  let heapLimit = 0;

  const mark = async (label: string): Promise<Mark> => {
    const rss = procStatus(pid).rss;
    const answer = await probe.ask(true);
    await sleep(AFTER_GC_MS);
    const after = procStatus(pid);
    const entries = await ledgerEntries(operator.metricsPort);
    heapLimit = answer.heapLimit;
    const figures: Mark = {
      label,
      rss,
      rssAfterGc: after.rss,
      anonAfterGc: after.anon,
      fileAfterGc: after.file,
      heapUsed: answer.heapUsed,
      heapPhysical: answer.heapPhysical,
      external: answer.external,
      arrayBuffers: answer.arrayBuffers,
      malloced: answer.malloced,
      ledger: entries,
    };
    marks.push(figures);
    if (mallocProbeOn) console.log(`info  fuzz memory: ${label}: ${mallocProbe(pid)}`);
    console.log(
      `info  fuzz memory: ${label}: RSS ${asMiB(rss)} MiB, after GC ${asMiB(after.rss)} MiB (anon ${asMiB(after.anon)}, file ${asMiB(after.file)}); heap used ${asMiB(answer.heapUsed)}, heap resident ${asMiB(answer.heapPhysical)}, external ${asMiB(answer.external)}, arrayBuffers ${asMiB(answer.arrayBuffers)} MiB; ledger ${entries}`,
    );
    return figures;
  };

  // The peak between marks: the resident set sampled often, the heap's share of it now and then.
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        const answer = await probe.ask(false, 10_000);
        const { rss } = procStatus(pid);
        peakNonHeap = Math.max(peakNonHeap, rss - answer.heapPhysical);
      } catch {
        // A busy process answers late; the next sample counts.
      }
      await sleep(250);
    }
  })();
  // Probes, as the kubelet and Prometheus send them, throughout.
  const prober = (async () => {
    for (let round = 0; sampling; round++) {
      await probeGet(operator.port, '/healthz', operator.ca);
      if (round % 5 === 0) await probeGet(operator.metricsPort, '/metrics');
      await sleep(200);
    }
  })();

  const send = (fuzzCase: FuzzCase, tally: Tally): Promise<void> =>
    sendCase(fuzzCase, {
      port: operator.port,
      agent,
      ca: operator.ca,
      client: operator.client,
      timeoutMs: 5000,
    }).then((result) => {
      tally.add(result);
    });
  const phase = async (
    label: string,
    cases: Iterable<FuzzCase>,
    concurrency = settings.concurrency,
  ): Promise<void> => {
    const tally = new Tally();
    const started = performance.now();
    await pool(cases, concurrency, (fuzzCase) => send(fuzzCase, tally));
    console.log(
      `info  fuzz memory: ${label}: ${[...tally.counts.values()].reduce((a, b) => a + b, 0)} requests in ${((performance.now() - started) / 1000).toFixed(1)} s: ${tally.toString()}`,
    );
  };

  try {
    await sleep(10_000);
    await mark('start (10 s after Ready)');
    // The peak from here on: the start-up's own is not the load's.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');

    await phase('valid reviews', validReviews(settings.valid));
    await mark('after the valid reviews');

    const others: number[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const first = round * settings.casesPerRound;
      await phase(
        `mutation round ${round + 1}`,
        mutated(settings.seed, first, settings.casesPerRound, others),
      );
      await mark(`after mutation round ${round + 1}`);
    }
    await phase(
      'envelopes and transport',
      envelopesAndTransport(settings.seed, others, settings.largeBodies),
    );
    await mark('after envelopes and transport');
    if (settings.burst > 0) {
      const label = `a burst of ${settings.burst} bodies just under 7 MiB, ${settings.burstConcurrency} at once`;
      await phase(label, burstOfLargeBodies(settings.burst), settings.burstConcurrency);
      await mark(`after ${label}`);
    }

    await phase('ledger: admitted pods with 253-character names', ledgerPods(settings.ledgerPods));
    console.log(
      `info  fuzz memory: reserved in ${LEDGER_QUOTA} (1m of CPU per pod): ${await reservedInBenchQuota(operator.metricsPort)}`,
    );
    await mark(`after ${settings.ledgerPods} admitted pods`);

    const idleFrom = performance.now();
    let left = await ledgerEntries(operator.metricsPort);
    while (left > 0 && performance.now() - idleFrom < settings.idleMs) {
      await sleep(1000);
      left = await ledgerEntries(operator.metricsPort);
    }
    const idleSeconds = Math.round((performance.now() - idleFrom) / 1000);
    if (left > 0)
      console.log(`info  fuzz memory: the ledger still holds ${left} entries after ${idleSeconds} s idle`);
    await mark(
      left > 0 ? `after ${idleSeconds} s idle (the bound)` : `the ledger released, ${idleSeconds} s idle`,
    );
    await sleep(10_000);
    await mark('end (10 s more idle)');
  } finally {
    sampling = false;
    await Promise.all([sampler, prober]);
    const peak = procStatus(pid).hwm;
    agent.destroy();
    await operator.stop();
    report(marks, peak, peakNonHeap, heapLimit, limit);
  }
}

function report(marks: Mark[], peak: number, peakNonHeap: number, heapLimit: number, limit: number): void {
  console.log(
    '\n| mark | RSS | RSS after GC | heap used | heap resident | external | arrayBuffers | non-heap (RSS after GC − heap resident) | ledger |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const m of marks) {
    console.log(
      `| ${m.label} | ${asMiB(m.rss)} | ${asMiB(m.rssAfterGc)} | ${asMiB(m.heapUsed)} | ${asMiB(m.heapPhysical)} | ${asMiB(m.external)} | ${asMiB(m.arrayBuffers)} | ${asMiB(m.rssAfterGc - m.heapPhysical)} | ${Number.isNaN(m.ledger) ? '-' : m.ledger} |`,
    );
  }
  console.log('');
  const ceiling = (0.6 * limit) / MiB;
  for (const m of marks) record(`fuzz memory: RSS ${m.label}`, m.rss / MiB, 'MiB', Math.floor(ceiling));
  inform('fuzz memory: peak RSS under the load (VmHWM from the start mark)', peak / MiB, 'MiB');
  inform('fuzz memory: peak non-heap (sampled RSS − heap resident)', peakNonHeap / MiB, 'MiB');
  inform("fuzz memory: V8's heap limit", heapLimit / MiB, 'MiB');
  record(
    "fuzz memory: heap limit + non-heap peak, share of the chart's limit",
    (100 * (heapLimit + peakNonHeap)) / limit,
    '%',
    90,
  );
}

/** Valid reviews of every path, round-robin over the seeds, each with its own uid. */
function* validReviews(count: number): Generator<FuzzCase> {
  const corpus = seeds();
  for (let i = 0; i < count; i++) {
    const seed = corpus[i % corpus.length]!;
    const uid = `bench-valid-${i}`;
    yield {
      seed: 0,
      index: i,
      path: seed.path,
      method: 'POST',
      description: seed.label,
      body: Buffer.from(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: { uid, ...seed.request },
        }),
      ),
      contentType: 'application/json',
      transport: 'plain',
      expect: { kind: 'decision' },
      uid,
    };
  }
}

/** The fuzzer's mutated reviews among cases [first, first + count); the indexes of the others go to `others`. */
function* mutated(seed: number, first: number, count: number, others: number[]): Generator<FuzzCase> {
  for (let index = first; index < first + count; index++) {
    const fuzzCase = generateCase(seed, index);
    if (fuzzCase.expect.kind === 'review') yield fuzzCase;
    else others.push(index);
  }
}

/**
 * The rest of the fuzzer's cases (broken envelopes, every transport abuse), with bodies just
 * under the 7 MiB limit mixed in: those are read, parsed and judged, the most a review can cost.
 */
function* envelopesAndTransport(
  seed: number,
  indexes: readonly number[],
  largeBodies: number,
): Generator<FuzzCase> {
  const every = Math.max(1, Math.floor(indexes.length / Math.max(1, largeBodies)));
  let large = 0;
  for (const [i, index] of indexes.entries()) {
    yield generateCase(seed, index);
    if (i % every === 0 && large < largeBodies) yield largeBody(large++);
  }
  while (large < largeBodies) yield largeBody(large++);
}

function* burstOfLargeBodies(count: number): Generator<FuzzCase> {
  for (let n = 0; n < count; n++) yield largeBody(n, 'burst');
}

function largeBody(n: number, kind = 'large'): FuzzCase {
  const corpus = seeds().filter((seed) => seed.path === '/mutate-pod' || seed.path === '/validate-pod');
  const seed = corpus[n % corpus.length]!;
  const uid = `bench-${kind}-${n}`;
  const request = structuredClone(seed.request) as {
    object?: { metadata?: { annotations?: Record<string, string> } };
  };
  const text = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, ...request },
  });
  const padding = 7 * MIB - text.length - 1024;
  const metadata = request.object?.metadata;
  if (metadata)
    metadata.annotations = {
      ...metadata.annotations,
      'bench.admission-operator.io/padding': 'p'.repeat(padding),
    };
  return {
    seed: 0,
    index: n,
    path: seed.path,
    method: 'POST',
    description: `${seed.label}, a body just under the 7 MiB limit`,
    body: Buffer.from(
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid, ...request },
      }),
    ),
    contentType: 'application/json',
    transport: 'plain',
    expect: { kind: 'decision' },
    uid,
  };
}

/** Pod creates that /validate-pod admits with a reservation in the bench's quota: one ledger entry each. */
function* ledgerPods(count: number): Generator<FuzzCase> {
  for (let i = 0; i < count; i++) {
    const prefix = `ledger-${i}-`;
    const name = prefix + 'x'.repeat(253 - prefix.length);
    const uid = `bench-ledger-${i}`;
    const request = {
      ...admissionRequest({
        kind: 'Pod',
        resource: 'pods',
        name,
        namespace: LEDGER_NAMESPACE,
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name,
            namespace: LEDGER_NAMESPACE,
            labels: { team: 'a', [QUOTA_LABELS.name]: LEDGER_QUOTA },
          },
          spec: { containers: [{ name: 'main', image: 'app:1', resources: { requests: { cpu: '1m' } } }] },
        },
      }),
      uid,
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
    };
    yield {
      seed: 0,
      index: i,
      path: '/validate-pod',
      method: 'POST',
      description: 'a pod with a 253-character name, admitted into the bench quota',
      body: Buffer.from(reviewBody(request)),
      contentType: 'application/json',
      transport: 'plain',
      expect: { kind: 'decision' },
      uid,
    };
  }
}
