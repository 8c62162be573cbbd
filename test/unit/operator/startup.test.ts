import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

// The image's entry point must never reach into scripts/ for a local control plane: without a
// cluster it says where to go and exits 2 instead.
test('the image entry point without any cluster exits 2 and points at npm start', () => {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'operator/main.ts'], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stdout + run.stderr, /no cluster to run against: .*npm start/);
});

test('the image entry point refuses --local=true, which only npm start can honour', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'operator/main.ts', '--local=true'], {
    env: { ...process.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stdout + run.stderr, /--local=true needs a local control plane/);
});
