/**
 * Kthena v1.0.0's Go module, as the Go module proxy serves it (`go mod download`): its examples,
 * its chart and its charts' CRDs, read where the module cache keeps them.
 */
import { join } from 'node:path';
import { goModuleDir } from '../../scripts/upstream/go-module.js';
import {
  KTHENA_CONTROLLER_MANAGER_VERSION,
  KTHENA_MODULE,
} from '../../scripts/upstream/kthena-controller-manager.js';

/** The Kthena release the rules follow (docs/rules/kthena.md): the controller-manager's, one release. */
export const KTHENA_VERSION = KTHENA_CONTROLLER_MANAGER_VERSION;

/** The CRDs of Kthena's chart (its subcharts' crds/ folders). */
export const KTHENA_CRDS = [
  'modelboosters.workload.serving.volcano.sh',
  'autoscalingpolicies.workload.serving.volcano.sh',
  'modelservings.workload.serving.volcano.sh',
  'modelroutes.networking.serving.volcano.sh',
  'modelservers.networking.serving.volcano.sh',
];

let cached: Promise<string> | undefined;

/** The module's folder in the module cache (read-only), downloaded on first use. */
export function kthenaModuleDir(): Promise<string> {
  cached ??= goModuleDir(KTHENA_MODULE, KTHENA_VERSION);
  return cached;
}

/** Kthena's chart as its module ships it. */
export async function kthenaChart(): Promise<string> {
  return join(await kthenaModuleDir(), 'charts', 'kthena');
}
