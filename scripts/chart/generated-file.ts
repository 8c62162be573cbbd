/**
 * One file `npm run chart:generate` writes, as committed and as generated, and what a check says
 * when the two differ: the generator's --check and the unit test name the file and the command
 * with the same words.
 */
import { relative } from 'node:path';
import { repoRoot } from '../cluster/layout.js';

export const GENERATE_COMMAND = 'npm run chart:generate';

export interface GeneratedFile {
  path: string;
  /** undefined: not committed. */
  committed: string | undefined;
  /** undefined: the file must not exist (a copy of nothing the registry ships). */
  generated: string | undefined;
}

/** Why the committed file is not what the generator makes, or undefined when it is. */
export function staleness(file: GeneratedFile): string | undefined {
  if (file.committed === file.generated) return undefined;
  const shown = relative(repoRoot, file.path);
  if (file.committed === undefined) return `${shown} is missing: run ${GENERATE_COMMAND}`;
  if (file.generated === undefined) {
    return `${shown} should not exist (nothing generates it): run ${GENERATE_COMMAND}, which removes it`;
  }
  return `${shown} is out of date: run ${GENERATE_COMMAND}`;
}

/**
 * `text` with what lies between the lines `start` and `end` replaced by `body`; a file that lost
 * a marker is refused, naming it, rather than generated into the wrong place.
 */
export function replaceBetween(text: string, start: string, end: string, body: string, file: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) {
    throw new Error(
      `${file} lacks the markers ${start} … ${end}: put them back, then run ${GENERATE_COMMAND}`,
    );
  }
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}
