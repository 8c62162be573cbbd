/**
 * Process warnings (a library's notice, a deprecation, a listener leak) go into the structured
 * log, bounded like every other line, instead of Node's default printing to stderr: an admin reads
 * one log, and stderr stays empty in normal operation. Deprecation and experimental-feature notices
 * are about our dependencies, with nothing for an admin to do: they are logged at debug.
 */
import type { Logger } from 'pino';
import { MAX_LOG_FIELD_CHARS, truncate } from '../webhook/util/bounded-text.js';

const DEVELOPER_NOTICES = new Set(['DeprecationWarning', 'ExperimentalWarning']);

/**
 * Replaces Node's printing of process warnings (in this thread: a worker has its own) with
 * `logger`; returns the undo.
 */
export function logProcessWarnings(logger: Logger, target: NodeJS.Process = process): () => void {
  // Node prints warnings through a listener of its own; the --no-warnings flag would silence them
  // instead of logging them.
  const printers = target.listeners('warning');
  for (const printer of printers) target.off('warning', printer);
  const onWarning = (warning: Error): void => {
    const { code } = warning as Error & { code?: unknown };
    const fields = {
      warning: {
        name: truncate(warning.name, MAX_LOG_FIELD_CHARS),
        ...(typeof code === 'string' ? { code: truncate(code, MAX_LOG_FIELD_CHARS) } : {}),
        message: truncate(warning.message, MAX_LOG_FIELD_CHARS),
      },
    };
    if (DEVELOPER_NOTICES.has(warning.name)) logger.debug(fields, 'process warning');
    else logger.warn(fields, 'process warning');
  };
  target.on('warning', onWarning);
  return () => {
    target.off('warning', onWarning);
    for (const printer of printers) target.on('warning', printer);
  };
}
