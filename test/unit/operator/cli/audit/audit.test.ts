/** `audit`'s command line: what it refuses before it reads any cluster. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditMain } from '../../../../../operator/cli/audit/main.js';

async function audit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await auditMain(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    readStdin: () => Promise.resolve(''),
    env: {},
  });
  return { code, stdout, stderr };
}

describe('admission-operator audit, usage', () => {
  it('documents -n, -A, -l, -o yaml and --policy-report in --help', async () => {
    const { code, stdout } = await audit(['--help']);
    assert.equal(code, 0);
    for (const flag of [
      /-n, --namespace NAME/,
      /-A, --all-namespaces/,
      /-l, --selector SELECTOR/,
      /text \(default\), json or yaml/,
      /--policy-report/,
    ])
      assert.match(stdout, flag);
  });

  it('exits 2 naming the flag, before reading a cluster', async () => {
    const format = await audit(['-o', 'table']);
    assert.equal(format.code, 2);
    assert.match(format.stderr, /audit: -o: must be text, json or yaml \(got "table"\)/);
    const selector = await audit(['--policy-report', '-l', 'app=web']);
    assert.equal(selector.code, 2);
    assert.match(
      selector.stderr,
      /--policy-report covers every object of a namespace: it cannot be used with -l/,
    );
    const empty = await audit(['-n', '']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /audit: -n: must name a namespace/);
    const unknown = await audit(['--bogus']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Usage: admission-operator audit/);
  });
});
