/**
 * The `admit` suite: `admission-operator admit` on 10,000 objects in one run (pods, GPU pods in a
 * tiered namespace, Models, Deployments expanded to their pods), from a JSON List and from
 * multi-document YAML, in process through admitMain as the command runs it. The reference is
 * reading the same input (parse and serialise the JSON once), measured in the same run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { admitMain } from '../../operator/cli/admit/main.js';
import { inform, record } from './report.js';

const OBJECTS = 10_000;

function objects(count: number): Record<string, unknown>[] {
  const container = (gpu: boolean) => ({
    name: 'main',
    image: 'registry.invalid/app:1',
    resources: {
      requests: { cpu: '100m' },
      limits: { cpu: '100m', ...(gpu ? { 'nvidia.com/gpu': '1' } : {}) },
    },
  });
  return Array.from({ length: count }, (_, i) => {
    switch (i % 4) {
      case 0:
        return {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p${i}`, namespace: 'team-b' },
          spec: { containers: [container(false)] },
        };
      case 1:
        return {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `g${i}`, namespace: 'team-a' },
          spec: { containers: [container(true)] },
        };
      case 2:
        return {
          apiVersion: 'workload.serving.volcano.sh/v1alpha1',
          kind: 'ModelBooster',
          metadata: { name: `m${i}`, namespace: 'team-b' },
          spec: {
            backend: {
              name: 'b0',
              type: 'vLLM',
              modelURI: 'hf://org/model',
              replicas: 1,
              workers: [{ type: 'server', image: 'vllm/vllm-openai:v0.10.0' }],
            },
          },
        };
      default:
        return {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: `d${i}`, namespace: 'team-b' },
          spec: {
            selector: { matchLabels: { app: `d${i}` } },
            template: { metadata: { labels: { app: `d${i}` } }, spec: { containers: [container(false)] } },
          },
        };
    }
  });
}

const STATE = [
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-a', labels: { 'tenant.kubenexus.io/tier': 'gold' } },
  },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } },
];

async function timeAdmit(file: string, state: string): Promise<{ ms: number; code: number; bytes: number }> {
  let bytes = 0;
  const started = performance.now();
  const code = await admitMain(['-f', file, '--state', state, '--expand-workloads', '-o', 'json'], {
    stdout: (text) => {
      bytes += text.length;
    },
    stderr: () => undefined,
    readStdin: () => Promise.resolve(''),
    env: {},
  });
  return { ms: performance.now() - started, code, bytes };
}

export async function benchAdmit(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-admit-'));
  try {
    const items = objects(OBJECTS);
    const jsonText = JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
    const jsonFile = join(dir, 'objects.json');
    const yamlFile = join(dir, 'objects.yaml');
    const stateFile = join(dir, 'state.json');
    await writeFile(jsonFile, jsonText);
    await writeFile(yamlFile, items.map((item) => stringify(item)).join('---\n'));
    await writeFile(stateFile, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: STATE }));

    const readStarted = performance.now();
    JSON.stringify(JSON.parse(jsonText));
    const readMs = performance.now() - readStarted;
    inform('admit: reference, parse and serialise the 10,000-object JSON once', readMs, 'ms');

    const json = await timeAdmit(jsonFile, stateFile);
    if (json.code !== 0) throw new Error(`admit exited ${json.code} on the bench objects`);
    record(
      `admit: ${OBJECTS} objects (+${OBJECTS / 4} expanded pods) from a JSON List`,
      json.ms,
      'ms',
      10_000,
    );
    inform('admit: JSON List / reference (ratio)', json.ms / readMs, '×');
    const yaml = await timeAdmit(yamlFile, stateFile);
    record(
      `admit: ${OBJECTS} objects (+${OBJECTS / 4} expanded pods) from multi-document YAML`,
      yaml.ms,
      'ms',
      10_000,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
