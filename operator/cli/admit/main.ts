/**
 * `admission-operator admit`: reads the arguments, the manifests and the state, sends every object
 * through the admission chain in input order (adding what is admitted to the state, as applying in
 * that order would), and prints the decisions. Returns the exit code: 0 when everything is
 * admitted, 1 when anything is denied, 2 on a usage or input error; --warn-exit-code when nothing
 * is denied but something is admitted only by its enforcement (warn, dryrun).
 */
import { pino, type Logger } from 'pino';
import { replaceResourcesCounted } from '../../../webhook/feature-gates.js';
import type { KubeObject } from '../../../webhook/admission/types.js';
import { truncate } from '../../../webhook/util/bounded-text.js';
import { versionLine } from '../../version.js';
import { admitUsage, parseAdmitArgs, UsageError, type AdmitOptions } from './args.js';
import type { AdmissionInput } from '../../../webhook/chain/call-webhook.js';
import { chainContextFactory } from '../../../webhook/chain/chain-context.js';
import { runChain } from '../../../webhook/chain/run-chain.js';
import { NO_DECISION_METRICS } from '../../../webhook/metrics/decision-metrics.js';
import { configMapsOf, tableContextOf, watchedGroupsOf } from './table-context.js';
import { lookupKind, splitApiVersion } from './kinds.js';
import { apiVersionOf, InputError, kindOf, loadManifests, whereOf, type Manifest } from './manifests.js';
import { formatMachine, formatText, outcomeOf, type ObjectResult } from './output.js';
import { enforcementInForce, enforcementNote } from './enforcement-in-force.js';
import { loadState, StateError, type LoadedState } from './state.js';
import { isWorkload, podOfWorkload } from './workloads.js';
import { KINDS } from '../../../webhook/kinds.js';

export interface AdmitIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

/** A logger whose lines read as a command's messages, not as JSON. */
function cliLogger(io: AdmitIo): Logger {
  return pino(
    { level: 'warn', base: null, timestamp: false },
    {
      write(line: string): void {
        const record = JSON.parse(line) as {
          level?: number;
          msg?: string;
          kind?: string;
          err?: { message?: string };
        };
        const level = (record.level ?? 40) >= 50 ? 'error' : 'warning';
        const detail = [record.kind, record.err?.message].filter((part) => part !== undefined).join(': ');
        io.stderr(`admit: ${level}: ${record.msg ?? ''}${detail ? ` (${truncate(detail, 512)})` : ''}\n`);
      },
    },
  );
}

const nameOf = (object: KubeObject): string =>
  typeof object.metadata.name === 'string' && object.metadata.name !== ''
    ? object.metadata.name
    : typeof object.metadata.generateName === 'string'
      ? `${object.metadata.generateName}*`
      : '';

function identity(object: KubeObject, namespace: string | undefined): string {
  return `${splitApiVersion(apiVersionOf(object)).group}/${kindOf(object)}/${namespace ?? ''}/${nameOf(object)}`;
}

interface Planned {
  manifest: Manifest;
  input: AdmissionInput;
}

/** Every manifest with its REST mapping and namespace, or the first input error. */
function plan(
  manifests: readonly Manifest[],
  old: readonly Manifest[],
  options: AdmitOptions,
  watchedGroups: ReadonlySet<string>,
  defaultNamespace: string,
): Planned[] {
  const namespaceOf = (manifest: Manifest, namespaced: boolean): string | undefined => {
    if (!namespaced) return undefined;
    const own = manifest.object.metadata.namespace;
    return typeof own === 'string' && own !== '' ? own : defaultNamespace;
  };
  const oldByIdentity = new Map<string, KubeObject>();
  for (const manifest of old) {
    const mapping = lookupKind(
      apiVersionOf(manifest.object),
      kindOf(manifest.object),
      watchedGroups,
      manifest.object.metadata.namespace !== undefined,
    );
    if (!mapping.ok) throw new InputError(`${whereOf(manifest)}: ${mapping.error}`);
    oldByIdentity.set(
      identity(manifest.object, namespaceOf(manifest, mapping.value.namespaced)),
      manifest.object,
    );
  }
  return manifests.map((manifest) => {
    const { object } = manifest;
    const mapping = lookupKind(
      apiVersionOf(object),
      kindOf(object),
      watchedGroups,
      object.metadata.namespace !== undefined,
    );
    if (!mapping.ok) throw new InputError(`${whereOf(manifest)}: ${mapping.error}`);
    const namespace = namespaceOf(manifest, mapping.value.namespaced);
    if (options.operation !== 'CREATE' && nameOf(object).endsWith('*')) {
      throw new InputError(
        `${whereOf(manifest)}: metadata.name: Required value: ${options.operation} needs the object's name`,
      );
    }
    let oldObject: KubeObject | null = null;
    if (options.operation === 'UPDATE') {
      oldObject = oldByIdentity.get(identity(object, namespace)) ?? null;
      if (!oldObject) {
        throw new InputError(
          `${whereOf(manifest)}: no old object for ${kindOf(object)} ${namespace ? `${namespace}/` : ''}${nameOf(object)} in --old`,
        );
      }
    }
    return {
      manifest,
      input: {
        kind: mapping.value.kind,
        resource: mapping.value.resource,
        namespaced: mapping.value.namespaced,
        namespace,
        operation: options.operation,
        object: options.operation === 'DELETE' ? null : object,
        oldObject: options.operation === 'DELETE' ? object : oldObject,
      },
    };
  });
}

async function evaluateAll(options: AdmitOptions, io: AdmitIo, logger: Logger): Promise<ObjectResult[]> {
  const readStdin = io.readStdin;
  const manifests = await loadManifests(options.files, readStdin);
  const stateFiles = await loadManifests(options.state, readStdin);
  const old = await loadManifests(options.old, readStdin);
  const configMaps = configMapsOf(options);
  const watchedGroups = watchedGroupsOf(options);

  const state: LoadedState = await loadState({
    files: stateFiles,
    cluster: options.cluster ? { kubeconfig: options.kubeconfig, context: options.context } : undefined,
    configMaps,
    operatorNamespace: options.operatorNamespace,
    logger,
    replaceResources: replaceResourcesCounted(options.featureGates),
  });
  for (const warning of state.warnings) io.stderr(`admit: warning: ${warning}\n`);
  const inForce = await enforcementInForce({
    flag: options.enforcement,
    env: io.env,
    state: state.store,
    operatorNamespace: options.operatorNamespace,
    cluster: options.cluster ? state.kubeConfig : undefined,
  });
  for (const warning of inForce.warnings) io.stderr(`admit: warning: ${truncate(warning, 1024)}\n`);
  const note = enforcementNote(inForce);
  if (note) io.stderr(`admit: ${note}\n`);
  const defaultNamespace = options.defaultNamespace ?? state.contextNamespace ?? 'default';
  const planned = plan(manifests, old, options, watchedGroups, defaultNamespace);

  // The GPU-class webhook's selectors follow the tier mapping in force, as in the operator.
  const chainContext = chainContextFactory(
    (mapping) => tableContextOf(options, mapping),
    state.store,
    logger,
    NO_DECISION_METRICS,
    inForce.enforcement,
  );
  const judge = (input: AdmissionInput): ObjectResult['verdict'] => {
    const verdict = runChain(input, chainContext());
    if (input.namespace && !state.store.namespace(input.namespace)) {
      verdict.notes.push(
        `namespace ${input.namespace} is not in the state: taken to exist with no labels but its name`,
      );
    }
    return verdict;
  };

  const results: ObjectResult[] = [];
  for (const { manifest, input } of planned) {
    const object = (input.object ?? input.oldObject) as KubeObject;
    const verdict = judge(input);
    results.push({
      where: whereOf(manifest),
      kind: input.kind.kind,
      namespace: input.namespace,
      name: nameOf(object),
      verdict,
    });
    // Applied in order: what is admitted is there for the objects after it.
    if (verdict.allowed && verdict.object) state.add(verdict.object);
    if (!options.expandWorkloads || !isWorkload(object)) continue;
    const expansion = podOfWorkload(verdict.object ?? object, input.namespace ?? defaultNamespace);
    if (!expansion.ok) throw new InputError(`${whereOf(manifest)}: ${expansion.error}`);
    const pod = expansion.value;
    const podVerdict = judge({
      kind: { group: KINDS.pod.group, version: KINDS.pod.version, kind: KINDS.pod.kind },
      resource: { group: KINDS.pod.group, version: KINDS.pod.version, resource: KINDS.pod.plural },
      namespaced: true,
      namespace: input.namespace ?? defaultNamespace,
      operation: 'CREATE',
      object: pod,
      oldObject: null,
    });
    results.push({
      where: whereOf(manifest),
      kind: 'Pod',
      namespace: input.namespace,
      name: nameOf(pod),
      expandedFrom: `${input.kind.kind}/${nameOf(object)}`,
      verdict: podVerdict,
    });
  }
  return results;
}

export async function admitMain(argv: readonly string[], io: AdmitIo): Promise<number> {
  let options: ReturnType<typeof parseAdmitArgs>;
  try {
    options = parseAdmitArgs(argv, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`admit: ${error.message}\n\n${admitUsage()}\n`);
    return 2;
  }
  if (options === 'help' || options === 'version') {
    io.stdout(`${options === 'help' ? admitUsage() : versionLine()}\n`);
    return 0;
  }
  let results: ObjectResult[];
  try {
    results = await evaluateAll(options, io, cliLogger(io));
  } catch (error) {
    if (error instanceof InputError || error instanceof StateError) {
      io.stderr(`admit: ${error.message}\n`);
      return 2;
    }
    // Exit 1 means "denied"; a failure of the command itself must not read as a verdict.
    io.stderr(
      `admit: internal error: ${truncate(error instanceof Error ? error.message : String(error), 1024)}\n`,
    );
    return 2;
  }
  io.stdout(options.output === 'text' ? formatText(results) : formatMachine(results, options.output));
  if (results.some((result) => !result.verdict.allowed)) return 1;
  return results.some((result) => outcomeOf(result.verdict) === 'WARN') ? options.warnExitCode : 0;
}
