import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const LOGGER = fileURLToPath(new URL('../../../operator/logger.ts', import.meta.url));
const LINES = 20_000;

/** Runs a process that logs LINES lines through the operator's logger, then `ending`; returns its stdout lines. */
function logThenEnd(ending: string): string[] {
  const script = `
    import { exitWhenLogWritten, operatorLogger } from ${JSON.stringify(LOGGER)};
    const logger = operatorLogger('info');
    // As the operator stops (operator/startup.ts): through exitWhenLogWritten.
    process.on('SIGTERM', () => exitWhenLogWritten(logger, 0));
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
  const outOfOrder = lines.findIndex((line, index) => (JSON.parse(line) as { i?: number }).i !== index);
  assert.equal(outOfOrder, -1, `line ${outOfOrder} is out of order`);
}

test('every decision line logged before the operator exits is written out, in order', () => {
  assertAllLines(logThenEnd('exitWhenLogWritten(logger, 0);'));
});

test('every decision line logged before SIGTERM is written out, in order', () => {
  assertAllLines(logThenEnd("process.kill(process.pid, 'SIGTERM');"));
});
