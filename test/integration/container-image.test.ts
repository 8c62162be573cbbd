/**
 * The container image: built with podman from the project's Dockerfile (scripts/image/build.sh),
 * run against the local API server with a read-only root filesystem as the chart runs it; it
 * answers /healthz, issues its certificate, and exits cleanly on SIGTERM as PID 1.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { freePorts } from '../../scripts/cluster/control-plane.js';
import { kubeconfigPath, repoRoot } from '../../scripts/cluster/layout.js';
import { versionLine } from '../../operator/version.js';
import { testNamespace, uniqueSuffix, waitFor } from '../harness/cluster.js';
import {
  cleanConfigurationsAfter,
  httpsCall,
  stopBeforeCleanup,
  waitForPublishedSecret,
} from '../harness/operator.js';
import { temporaryDirectory } from '../harness/temp-dir.js';

const execFileAsync = promisify(execFile);
const TAG = 'localhost/admission-operator:test';
const env = { ...process.env, CONTAINERS_CONF: join(repoRoot, '.cache', 'podman', 'containers.conf') };

const podman = (args: string[]): Promise<{ stdout: string; stderr: string }> =>
  execFileAsync('podman', args, { env, maxBuffer: 16 * 1024 * 1024 });

describe('container image', () => {
  it('builds, serves /healthz against the real API server, and stops cleanly on SIGTERM', async (t) => {
    await execFileAsync('bash', [join(repoRoot, 'scripts', 'image', 'build.sh'), TAG], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
    cleanConfigurationsAfter(t);
    const namespace = await testNamespace(t, 'image');
    // Both ports free ones: with the host's network, the default metrics port (8080) was taken once by
    // a process of the file beside this one, and the container exited on EADDRINUSE.
    const [port, metricsPort] = await freePorts(2);
    // The image runs as 65532: give it a copy of the admin kubeconfig it can read.
    const dir = await temporaryDirectory('image-kubeconfig-');
    await chmod(dir, 0o755);
    const kubeconfig = join(dir, 'kubeconfig');
    await copyFile(kubeconfigPath, kubeconfig);
    await chmod(kubeconfig, 0o644);

    const name = `admission-operator-${uniqueSuffix()}`;
    await podman([
      'run',
      '-d',
      '--pull=never',
      '--network=host',
      '--read-only',
      `--name=${name}`,
      '-v',
      `${kubeconfig}:/etc/admission/kubeconfig:ro`,
      '-e',
      'KUBECONFIG=/etc/admission/kubeconfig',
      TAG,
      `--namespace=${namespace}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    ]);
    stopBeforeCleanup(t, () => podman(['rm', '-f', name]).catch(() => undefined));

    await waitFor(
      '/healthz from the container',
      async () => (await httpsCall(port!, '/healthz')).status === 200,
      {
        timeoutMs: 60_000,
      },
    ).catch(async (error: unknown) => {
      // The container is removed when the test ends: what it said goes with the failure.
      const logs = await podman(['logs', '--tail=40', name]).then(
        ({ stdout, stderr }) => `${stdout}${stderr}`,
        (logsError: unknown) => `podman logs failed: ${String(logsError)}`,
      );
      const state = await podman([
        'inspect',
        name,
        '--format',
        '{{.State.Status}} exit {{.State.ExitCode}}',
      ]).then(
        ({ stdout }) => stdout.trim(),
        () => 'unknown',
      );
      throw new Error(`${(error as Error).message}\ncontainer ${state}; its last lines:\n${logs}`);
    });
    await waitForPublishedSecret(namespace);

    await podman(['stop', '--time=20', name]);
    const { stdout } = await podman(['inspect', name, '--format', '{{.State.ExitCode}}']);
    assert.equal(stdout.trim(), '0', 'SIGTERM as PID 1 exits cleanly');
    const { stdout: user } = await podman(['image', 'inspect', TAG, '--format', '{{.Config.User}}']);
    assert.equal(user.trim(), '65532:65532');

    // The build stage has no .git: build.sh passes the commit in, and the bundle carries it.
    const { stdout: version } = await podman([
      'run',
      '--rm',
      '--pull=never',
      '--network=none',
      TAG,
      '--version',
    ]);
    assert.equal(version, `${versionLine()}\n`, 'the image names the version and commit of this checkout');

    // The image's first argument may name a subcommand: `admit` judges manifests from stdin, offline.
    const admit = execFileAsync(
      'podman',
      ['run', '-i', '--rm', '--pull=never', '--network=none', '--read-only', TAG, 'admit', '-f', '-'],
      { env, maxBuffer: 16 * 1024 * 1024 },
    );
    admit.child.stdin?.end(
      [
        'apiVersion: workload.serving.volcano.sh/v1alpha1',
        'kind: ModelBooster',
        'metadata: {name: bounds, namespace: default}',
        'spec:',
        '  backend:',
        '    {name: b0, type: vLLM, modelURI: "hf://org/model", replicas: 1,',
        '     workers: [{type: prefill, image: "vllm/vllm-openai:v0.10.0"}, {type: decode, image: "vllm/vllm-openai:v0.10.0"}]}',
        '',
      ].join('\n'),
    );
    await assert.rejects(admit, (error: { code?: number; stdout?: string }) => {
      assert.equal(error.code, 1, 'admit exits 1 when something is denied');
      assert.match(error.stdout ?? '', /DENIED\s+ModelBooster default\/bounds/);
      assert.match(error.stdout ?? '', /If backend type is 'vLLM', there must be exactly one worker/);
      return true;
    });
  });
});
