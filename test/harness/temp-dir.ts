/**
 * Temporary directories for a test file: each is removed when the file's process exits (the test
 * runner gives every file a process of its own), so a run leaves nothing in the system's temp
 * directory, whatever the test that made it did with it.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new directory under the system's temp directory whose name starts with `prefix`. */
export async function temporaryDirectory(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (made.length === 0) {
    process.once('exit', () => {
      for (const path of made) rmSync(path, { recursive: true, force: true });
    });
  }
  made.push(dir);
  return dir;
}
