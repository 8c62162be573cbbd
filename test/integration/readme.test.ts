/**
 * The README's commands that need no node: `npm start` (its first line) against the real local
 * control plane, and the `admit` blocks, run as the README prints them. The blocks that install
 * the chart run on the node, in test/e2e/readme.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { waitFor } from '../harness/cluster.js';
import {
  cleanConfigurationsAfter,
  httpsGet,
  readSecret,
  secretValue,
  stopBeforeCleanup,
} from '../harness/operator.js';
import { readmeCommands, runReadmeBlock } from '../harness/readme.js';

/** start-local's namespace and port: the defaults the README's `npm start` runs with. */
const LOCAL_NAMESPACE = 'admission-system';
const LOCAL_PORT = 9443;

describe('README', () => {
  it('npm start runs the operator against the local cluster until it is Ready, and stops on SIGTERM', async (t) => {
    cleanConfigurationsAfter(t);
    const start = readmeCommands('quickstart').find((command) => command === 'npm start');
    assert.ok(start, 'the README no longer says npm start');
    const env = { ...process.env };
    // What a new user has: no kubeconfig, not in a cluster; the local cluster is found on its own.
    delete env.KUBECONFIG;
    delete env.KUBERNETES_SERVICE_HOST;
    const child = spawn('bash', ['-c', `exec ${start}`], {
      cwd: repoRoot,
      env,
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise<void>((resolvePromise) =>
      child.on('exit', () => {
        resolvePromise();
      }),
    );
    stopBeforeCleanup(t, async () => {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
      await exited;
    });
    await waitFor(
      '/readyz of the operator npm start runs',
      async () => {
        const ca = secretValue(await readSecret(LOCAL_NAMESPACE), 'ca.crt');
        return (
          ca !== '' && (await httpsGet(LOCAL_PORT, '/readyz', ca).catch(() => undefined))?.status === 200
        );
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    // A terminal's Ctrl-C reaches every process of the group; npm itself then exits by the signal.
    if (child.pid) process.kill(-child.pid, 'SIGTERM');
    await exited;
    await waitFor(
      'the operator to stop serving',
      () =>
        new Promise<boolean>((resolvePromise) => {
          const socket = connect(LOCAL_PORT, '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolvePromise(false);
          });
          socket.once('error', () => {
            resolvePromise(true);
          });
        }),
      { timeoutMs: 20_000 },
    );
  });

  it('admit: the GPU pod gets its class, the pod over its quota is denied, exit 1', async () => {
    const { code, output } = await runReadmeBlock('admit');
    assert.equal(code, 1, output);
    assert.match(output, /MUTATED {2}Pod team-a\/trainer/);
    assert.match(output, /\+ spec\.nodeSelector: \{ gpu\.nvidia\.com\/class: h200 \}/);
    assert.match(output, /DENIED {3}Pod team-a\/too-big/);
    assert.match(output, /exceeded quota: default\/team-a, requested: cpu=2/);
    assert.match(output, /3 objects: 2 admitted, 1 denied/);
  });

  it('admit --enforcement validate-pod=warn: the pod over its quota is WARN and the command exits 0; --version', async () => {
    const { code, output } = await runReadmeBlock('admit-warn');
    assert.equal(code, 0, output);
    assert.match(output, /WARN {5}Pod team-a\/too-big/);
    assert.match(
      output,
      /validate-pod would refuse this \(enforcement warn\): .*exceeded quota: default\/team-a/,
    );
    assert.match(
      output,
      /2 objects: 2 admitted, 0 denied; 1 admitted only by their webhooks' enforcement \(WARN\)/,
    );
    assert.match(output, /^admission-operator \d+\.\d+\.\d+ \(commit [0-9a-f]{7,}/m);
  });

  it('admit in CI: the Deployment and its pod pass, so the step succeeds', async () => {
    const { code, output } = await runReadmeBlock('admit-ci');
    assert.equal(code, 0, output);
    assert.match(output, /2 objects: 2 admitted, 0 denied/);
    assert.doesNotMatch(output, /admission would refuse/);
  });
});
