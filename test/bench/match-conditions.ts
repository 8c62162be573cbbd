/**
 * `npm run bench -- conditions` (only when named: it compiles Go against each tested release's
 * k8s.io/apiserver, from the module cache the control plane's build filled): what the match
 * conditions of our narrowed pod webhooks cost the API server for a pod they do not send, measured
 * with the API server's own matcher (match-conditions/conditions_test.go) on a defaulted
 * Deployment pod, each as a multiple of a reference condition measured in the same run,
 * `has(object.metadata)`: the object's CEL view and a trivial expression (docs/design.md, "Blast
 * radius", says why the shapes are what they are).
 *
 * `false && <the condition>` shows how a release evaluates: on 1.30 it costs what the condition
 * does, because cel-go 0.17 plans the whole expression again for every review it evaluates.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { narrowWebhooks } from '../../webhook/narrowing/narrow-webhooks.js';
import type { WebhookEntry } from '../../webhook/table.js';
import type { ColocationProfileView } from '../../webhook/state.js';
import { committedModuleDir } from '../../scripts/cluster/kubernetes-module.js';
import { parseRelease, testedReleases } from '../../scripts/cluster/kubernetes-versions.js';
import { cacheDir } from '../../scripts/cluster/layout.js';
import { stateSnapshot } from '../harness/state.js';
import { defaultWebhooks } from '../harness/table-context.js';
import { inform } from './report.js';

const execFileAsync = promisify(execFile);
const SOURCES = join(fileURLToPath(new URL('.', import.meta.url)), 'match-conditions');
/** The matcher's API changed between the tested releases: the shim each minor release builds with. */
const SHIMS: Readonly<Record<string, string>> = {
  '1.30': 'shim-v1.30_test.go',
  '1.37': 'shim-v1.37_test.go',
};
const REFERENCE = 'has(object.metadata)';
const PROFILES = 30;

/** The conditions of the entry of `path` a pod of an unlabelled namespace meets on CREATE. */
function conditionsOf(entries: readonly WebhookEntry[], path: string): string[] {
  const entry = entries.find(
    (each) =>
      each.path === path &&
      each.resourceRules.some((rule) => rule.operations.includes('CREATE')) &&
      !each.name.includes('-ns'),
  );
  if (!entry) throw new Error(`no narrowed entry of ${path} for CREATE`);
  return entry.matchConditions.map((condition) => condition.expression);
}

function cases(): Record<string, string[]> {
  const plain = narrowWebhooks(defaultWebhooks(), stateSnapshot());
  const colocationProfiles: ColocationProfileView[] = Array.from({ length: PROFILES }, (_, i) => ({
    name: `profile-${i}`,
    annotations: {},
    spec: { selector: { matchLabels: { app: `app-${i}` } }, labels: { colocated: 'true' } },
  }));
  const profiled = narrowWebhooks(defaultWebhooks(), stateSnapshot({ colocationProfiles }));
  const validate = conditionsOf(plain, '/validate-pod');
  return {
    reference: [REFERENCE],
    'mutate-pod': conditionsOf(plain, '/mutate-pod'),
    'validate-pod': validate,
    'mutate-pod-with-profiles': conditionsOf(profiled, '/mutate-pod'),
    'validate-pod-behind-false': validate.map((expression) => `false && (${expression})`),
  };
}

interface Measured {
  nanoseconds: number;
  allocations: number;
}

async function measure(
  release: string,
  shim: string,
  input: Record<string, string[]>,
): Promise<Map<string, Measured>> {
  const dir = join(cacheDir, 'bench', 'match-conditions', release);
  await mkdir(dir, { recursive: true });
  for (const file of ['go.mod', 'go.sum'])
    await copyFile(join(committedModuleDir(release), file), join(dir, file));
  await copyFile(join(SOURCES, 'conditions_test.go'), join(dir, 'conditions_test.go'));
  await copyFile(join(SOURCES, shim), join(dir, 'shim_test.go'));
  await writeFile(join(dir, 'cases.json'), JSON.stringify(input));
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOWORK: 'off', CONDITIONS: join(dir, 'cases.json') };
  await execFileAsync('go', ['test', '-c', '-o', 'conditions.test', '.'], {
    cwd: dir,
    env,
    maxBuffer: 2 ** 24,
  });
  const { stdout } = await execFileAsync(
    join(dir, 'conditions.test'),
    ['-test.run=^$', '-test.bench=.', '-test.benchtime=4000x', '-test.count=3', '-test.cpu=1'],
    { cwd: dir, env, maxBuffer: 2 ** 24 },
  );
  const results = new Map<string, Measured>();
  for (const line of stdout.split('\n')) {
    const found = /^BenchmarkConditions\/(\S+)\s+\d+\s+([\d.]+) ns\/op\s+\d+ B\/op\s+(\d+) allocs\/op/.exec(
      line,
    );
    if (!found) continue;
    const [, name = '', nanoseconds = '0', allocations = '0'] = found;
    const seen = results.get(name);
    // The fastest of the runs: the one a noisy neighbour disturbed least.
    if (!seen || Number(nanoseconds) < seen.nanoseconds)
      results.set(name, { nanoseconds: Number(nanoseconds), allocations: Number(allocations) });
  }
  return results;
}

export async function benchMatchConditions(): Promise<void> {
  const input = cases();
  for (const release of testedReleases()) {
    const parsed = parseRelease(release);
    const shim = parsed ? SHIMS[`${parsed.major}.${parsed.minor}`] : undefined;
    if (!shim) {
      inform(`conditions ${release}: no matcher shim for this release (test/bench/match-conditions/)`, 0, '');
      continue;
    }
    const results = await measure(release, shim, input);
    const reference = results.get('reference');
    if (!reference) throw new Error(`conditions ${release}: the reference was not measured`);
    inform(`conditions ${release}: reference ${REFERENCE}, per review`, reference.nanoseconds / 1000, 'µs');
    inform(`conditions ${release}: reference, allocations per review`, reference.allocations, 'count');
    for (const name of Object.keys(input)) {
      const measured = results.get(name);
      if (!measured || name === 'reference') continue;
      inform(
        `conditions ${release}: ${name} / reference, time`,
        measured.nanoseconds / reference.nanoseconds,
        '×',
      );
      inform(
        `conditions ${release}: ${name} / reference, allocations`,
        measured.allocations / reference.allocations,
        '×',
      );
    }
    const behind = results.get('validate-pod-behind-false');
    const validate = results.get('validate-pod');
    if (behind && validate)
      inform(
        `conditions ${release}: false && validate-pod / validate-pod, time (1 when a release plans per review)`,
        behind.nanoseconds / validate.nanoseconds,
        '×',
      );
  }
}
