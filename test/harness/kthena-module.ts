/**
 * Kthena v1.0.0's Go module, as the Go module proxy serves it (`go mod download`): its examples
 * and its charts' CRDs, read where the module cache keeps them.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';

export const KTHENA_MODULE = 'github.com/volcano-sh/kthena';
/** The Kthena release the rules follow (docs/rules/kthena.md). */
export const KTHENA_VERSION = 'v1.0.0';

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
  cached ??= promisify(execFile)('go', ['mod', 'download', '-json', `${KTHENA_MODULE}@${KTHENA_VERSION}`], {
    cwd: tmpdir(),
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  }).then(({ stdout }) => {
    const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
    if (!info.Dir) throw new Error(`go mod download ${KTHENA_MODULE}@${KTHENA_VERSION}: ${info.Error}`);
    return info.Dir;
  });
  return cached;
}
