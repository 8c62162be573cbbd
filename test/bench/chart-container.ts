/**
 * The operator as the chart runs it, for the benches that measure memory against the chart's limit:
 * the container's literal environment and memory limit from `helm template`, and Node's heap
 * percentage turned into the size it stands for under that limit.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureHelm } from '../../scripts/cluster/binaries.js';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { parseQuantity } from '../../webhook/util/quantity.js';

const MiB = 2 ** 20;
const CHART = join(repoRoot, 'charts/admission-operator');

/** The chart's operator container: the literal environment it sets and its memory limit. */
export async function chartContainer(): Promise<{ env: Record<string, string>; memoryLimitBytes: number }> {
  const rendered = execFileSync(await ensureHelm(), ['template', 'x', CHART], { encoding: 'utf8' });
  const deployment = parseAllDocuments(rendered)
    .map((document) => document.toJS() as { kind?: string; spec?: unknown } | null)
    .find((object) => object?.kind === 'Deployment') as
    | {
        spec: {
          template: {
            spec: {
              containers: {
                name: string;
                env?: { name: string; value?: string }[];
                resources?: { limits?: { memory?: string } };
              }[];
            };
          };
        };
      }
    | undefined;
  const container = deployment?.spec.template.spec.containers.find((each) => each.name === 'operator');
  const limit = container?.resources?.limits?.memory;
  if (!container || !limit) throw new Error('the chart renders no operator container with a memory limit');
  const env: Record<string, string> = {};
  for (const { name, value } of container.env ?? []) if (value !== undefined) env[name] = value;
  return { env, memoryLimitBytes: Number(parseQuantity(limit) / 1_000_000_000n) };
}

/**
 * NODE_OPTIONS as Node would apply it inside the container: a heap percentage is of the cgroup's
 * memory limit, which the bench's process does not have, so it becomes the size it stands for.
 */
export function underLimit(nodeOptions: string, limitBytes: number): string {
  return nodeOptions.replace(
    /--max-old-space-size-percentage=(\d+(?:\.\d+)?)/,
    (_, percent: string) =>
      `--max-old-space-size=${Math.floor((Number(percent) / 100) * (limitBytes / MiB))}`,
  );
}
