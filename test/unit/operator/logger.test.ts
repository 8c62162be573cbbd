import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const LOGGER = fileURLToPath(new URL('../../../operator/logger.ts', import.meta.url));
const LINES = 20_000;

/** Runs a process that logs LINES lines through the operator's logger, then `ending`; returns its stdout lines. */
function logThenEnd(ending: string): string[] {
  const script = `
    import { operatorLogger } from ${JSON.stringify(LOGGER)};
    const logger = operatorLogger('info');
    process.on('SIGTERM', () => process.exit(0));
    for (let i = 0; i < ${LINES}; i++) logger.info({ i, webhook: 'validate-pod' }, 'admission decision');
    ${ending}
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout.split('\n').filter((line) => line !== '');
}

function assertAllLines(lines: string[]): void {
  assert.equal(lines.length, LINES);
  assert.equal((JSON.parse(lines.at(-1) ?? '{}') as { i?: number }).i, LINES - 1);
}

test('every decision line logged before process.exit is written out', () => {
  assertAllLines(logThenEnd('process.exit(0);'));
});

test('every decision line logged before SIGTERM is written out', () => {
  assertAllLines(logThenEnd("process.kill(process.pid, 'SIGTERM');"));
});
