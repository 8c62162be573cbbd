import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { logProcessWarnings } from '../../../operator/process-warnings.js';
import { parseDocument } from 'yaml';

interface Line {
  level: number;
  msg: string;
  warning: { name: string; code?: string; message: string };
}

const nextTick = (): Promise<void> => new Promise((resolveTick) => setImmediate(resolveTick));

describe('process warnings', () => {
  it('go into the structured log, bounded, instead of stderr, and the undo brings Node’s printing back', async () => {
    const lines: Line[] = [];
    const logger = pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
    );
    const printers = process.listeners('warning');
    const undo = logProcessWarnings(logger);
    try {
      assert.equal(
        process.listeners('warning').some((listener) => printers.includes(listener)),
        false,
        'Node’s own printer is off',
      );
      // What the YAML library says of a map used as a key when its log level lets it.
      parseDocument('? [a, b]\n: x\n', { logLevel: 'warn' }).toJS();
      process.emitWarning('x'.repeat(10_000), { type: 'DeprecationWarning', code: 'DEP0999' });
      await nextTick();
    } finally {
      undo();
    }
    assert.deepEqual(process.listeners('warning'), printers);
    assert.equal(lines.length, 2);
    const [yaml, deprecation] = lines as [Line, Line];
    assert.equal(yaml.level, 40);
    assert.equal(yaml.msg, 'process warning');
    assert.match(yaml.warning.message, /^Keys with collection values will be stringified/);
    assert.equal(deprecation.level, 20, 'a deprecation is for developers: debug');
    assert.equal(deprecation.warning.code, 'DEP0999');
    assert.ok(deprecation.warning.message.length <= 256);
    assert.match(deprecation.warning.message, /more chars\)$/);
  });
});
