/**
 * Kthena v1.0.0's own examples (`examples/` of its Go module) through the real API server, with
 * Kthena's own CRDs from the module's charts and the operator's webhooks in place of Kthena's:
 * every ModelBooster, AutoscalingPolicy, ModelServing, ModelRoute and ModelServer in them is
 * decided as Kthena v1.0.0 decides it (its mutator's defaults stored), a broken variant of each
 * refused with Kthena's message, and each of the seven webhooks shown to be called.
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { repoRoot } from '../../scripts/cluster/layout.js';
import type { JsonObject } from '../../webhook/admission/types.js';
import { applyYaml, clusterKubeConfig, kubectl, testNamespace, waitFor } from '../harness/cluster.js';
import { kthenaModuleDir } from '../harness/kthena-module.js';
import { freshOperator, logsMatching } from '../harness/operator.js';
import { ApiextensionsV1Api } from '@kubernetes/client-node';

const KINDS = new Set(['ModelBooster', 'AutoscalingPolicy', 'ModelServing', 'ModelRoute', 'ModelServer']);
const CHART_CRDS = ['charts/kthena/charts/workload/crds', 'charts/kthena/charts/networking/crds'];

/**
 * The examples Kthena v1.0.0 itself refuses (checked with its own handler, the differential
 * suite's oracle), with the part of Kthena's message that says why.
 */
const REFUSED_BY_KTHENA: Readonly<Record<string, RegExp>> = {
  // Role names must start with a letter (a DNS-1035 label); this example's is "405b".
  'model-serving/multi-node.yaml':
    /spec\.template\.roles\[0\]\.name: Invalid value: "405b": role name must be a valid DNS-1035 label/,
};

interface Example {
  file: string;
  object: JsonObject & { apiVersion: string; kind: string; metadata: JsonObject & { name: string } };
}

async function examples(dir: string): Promise<Example[]> {
  const files = (await readdir(join(dir, 'examples'), { recursive: true }))
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  const found: Example[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(join(dir, 'examples', file), 'utf8'))) {
      const object = document.toJS() as Example['object'] | null;
      if (object && KINDS.has(object.kind) && object.apiVersion.includes('.serving.volcano.sh/')) {
        delete object.metadata.namespace;
        found.push({ file, object });
      }
    }
  }
  return found;
}

async function installModuleCrds(dir: string): Promise<void> {
  const extensions = (await clusterKubeConfig()).makeApiClient(ApiextensionsV1Api);
  for (const folder of CHART_CRDS) {
    for (const file of (await readdir(join(dir, folder))).sort()) {
      const [crd] = await applyYaml(await readFile(join(dir, folder, file), 'utf8'));
      const name = crd?.metadata?.name ?? '';
      await waitFor(`${name} to be established`, async () => {
        const stored = await extensions.readCustomResourceDefinition({ name });
        return stored.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      });
    }
  }
}

/** A CRD schema without its descriptions, as crds/ keeps Kthena's. */
function withoutDescriptions(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const node = schema as Record<string, unknown>;
  delete node.description;
  for (const child of Object.values((node.properties ?? {}) as Record<string, unknown>))
    withoutDescriptions(child);
  for (const key of ['items', 'additionalProperties', 'not']) withoutDescriptions(node[key]);
  for (const key of ['anyOf', 'allOf', 'oneOf'])
    for (const child of (node[key] ?? []) as unknown[]) withoutDescriptions(child);
}

/** crds/ holds Kthena's CRDs as its module's charts define them, descriptions and our label aside. */
async function assertProjectCrdsAreKthenas(dir: string): Promise<void> {
  for (const folder of CHART_CRDS) {
    for (const file of (await readdir(join(dir, folder))).sort()) {
      const theirs = parse(await readFile(join(dir, folder, file), 'utf8')) as JsonObject & {
        metadata: { name: string };
        spec: { versions: { schema: { openAPIV3Schema: unknown } }[] };
      };
      for (const version of theirs.spec.versions) withoutDescriptions(version.schema.openAPIV3Schema);
      const ours = parse(
        await readFile(join(repoRoot, 'crds', `${theirs.metadata.name}.yaml`), 'utf8'),
      ) as JsonObject & {
        metadata: JsonObject;
      };
      delete ours.metadata.labels;
      assert.deepEqual(ours, theirs, `crds/${theirs.metadata.name}.yaml is Kthena's ${folder}/${file}`);
    }
  }
}

async function create(namespace: string, object: JsonObject): Promise<void> {
  // create, not apply: a client-side apply would store the object again in an annotation.
  await kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify(object));
}

async function expectRefusal(namespace: string, object: JsonObject, message: RegExp): Promise<void> {
  await assert.rejects(create(namespace, object), (error: { stderr?: string }) => {
    assert.match(
      error.stderr ?? '',
      /admission webhook "[a-z-]+\.admission-operator\.io" denied the request/,
    );
    assert.match(error.stderr ?? '', message);
    return true;
  });
}

function resourceOf(object: Example['object']): string {
  const group = object.apiVersion.split('/')[0] ?? '';
  return `${object.kind.toLowerCase()}s.${group}`.replace('autoscalingpolicys', 'autoscalingpolicies');
}

describe("Kthena v1.0.0's examples", () => {
  it('are decided as Kthena decides them, and their broken variants refused with its messages', async (t) => {
    const dir = await kthenaModuleDir();
    await assertProjectCrdsAreKthenas(dir);
    await installModuleCrds(dir);
    const { operator } = await freshOperator(t);
    const all = await examples(dir);
    assert.ok(all.length >= 40, `found ${all.length} Kthena objects in the examples`);
    for (const kind of KINDS)
      assert.ok(
        all.some((example) => example.object.kind === kind),
        `an example ${kind}`,
      );

    // One namespace per file: examples of different files reuse names.
    const namespaces = new Map<string, string>();
    for (const { file } of all)
      if (!namespaces.has(file)) namespaces.set(file, await testNamespace(t, 'kthena-ex'));
    for (const { file, object } of all) {
      const namespace = namespaces.get(file) ?? '';
      const refusal = REFUSED_BY_KTHENA[file];
      if (refusal && object.kind === 'ModelServing') {
        await expectRefusal(namespace, object, refusal);
        continue;
      }
      await create(namespace, object).catch((error: unknown) => {
        const stderr = (error as { stderr?: string }).stderr ?? (error as Error).message;
        assert.fail(`${file}: ${object.kind} ${object.metadata.name} was refused: ${stderr}`);
      });
      if (object.kind === 'AutoscalingPolicy') {
        // Kthena's mutator guarantees both stabilization windows.
        const { stdout } = await kubectl([
          'get',
          resourceOf(object),
          '-n',
          namespace,
          object.metadata.name,
          '-o',
          'json',
        ]);
        const behavior = (JSON.parse(stdout) as { spec: { behavior: JsonObject } }).spec.behavior as {
          scaleDown?: JsonObject;
          scaleUp?: { stablePolicy?: JsonObject; panicPolicy?: JsonObject };
        };
        assert.ok(
          behavior.scaleDown?.stabilizationWindow !== undefined,
          `${file}: scaleDown.stabilizationWindow`,
        );
        assert.ok(
          behavior.scaleUp?.stablePolicy?.stabilizationWindow !== undefined,
          `${file}: stablePolicy.stabilizationWindow`,
        );
        assert.ok(behavior.scaleUp?.panicPolicy !== undefined, `${file}: panicPolicy`);
      }
    }

    const namespace = await testNamespace(t, 'kthena-broken');
    const first = (kind: string, file?: string): Example['object'] => {
      const found = all.find(
        (example) => example.object.kind === kind && (file === undefined || example.file === file),
      );
      assert.ok(found, `an example ${kind}`);
      return structuredClone(found.object);
    };

    // The case: a vLLM backend with a prefill and a decode worker instead of one server.
    const booster = first('ModelBooster', 'model-booster/Qwen2.5-0.5B-Instruct.yaml');
    const backend = (booster.spec as { backend: JsonObject }).backend;
    const [worker] = backend.workers as JsonObject[];
    backend.workers = [
      { ...worker, type: 'prefill' },
      { ...worker, type: 'decode' },
    ];
    await expectRefusal(
      namespace,
      booster,
      /validation failed:\n {2}- spec\.backend\.workers: Invalid value: 2: If backend type is 'vLLM', there must be exactly one worker/,
    );

    const policy = first(
      'AutoscalingPolicy',
      'prometheus-autoscaler/disaggregated-autoscaler/autoscalerPolicy.yaml',
    );
    const target = (policy.spec as { disaggregatedTarget: { targetRef: JsonObject } }).disaggregatedTarget;
    target.targetRef.kind = 'Deployment';
    await expectRefusal(
      namespace,
      policy,
      /spec\.disaggregatedTarget\.targetRef\.kind: Invalid value: "Deployment": targetRef\.kind must be ModelServing, but got Deployment/,
    );

    const serving = first('ModelServing', 'model-serving/sample.yaml');
    const spec = serving.spec as JsonObject;
    spec.recoveryPolicy = 'ServingGroupRecreate';
    spec.rolloutStrategy = { type: 'RoleRollingUpdate' };
    await expectRefusal(
      namespace,
      serving,
      /spec\.rolloutStrategy\.type: Invalid value: "RoleRollingUpdate": incompatible recoveryPolicy and rolloutStrategy\.type after applying defaults/,
    );

    const route = first('ModelRoute', 'kthena-router/ModelRouteSubset.yaml');
    for (const rule of (route.spec as { rules: { targetModels: JsonObject[] }[] }).rules) {
      for (const model of rule.targetModels) model.weight = 0;
    }
    await expectRefusal(
      namespace,
      route,
      /validation failed: {3}- spec\.rules\[0\]\.targetModels: Invalid value: 0: total weight must be greater than zero/,
    );

    const called = new Set(logsMatching(operator, /admission decision/).map((line) => String(line.webhook)));
    for (const name of [
      'mutate-modelbooster',
      'validate-modelbooster',
      'mutate-autoscalingpolicy',
      'validate-autoscalingpolicy',
      'validate-modelserving',
      'validate-modelroute',
      'validate-modelserver',
    ]) {
      assert.ok(called.has(`${name}.admission-operator.io`), `the API server never called ${name}`);
    }
  });
});
