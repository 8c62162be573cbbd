/**
 * The operator's logger. Every admission decision is a log line, so a blocking write per line
 * would put the terminal or pipe on the admission path: lines are written asynchronously
 * instead. The operator exits through exitWhenLogWritten, so no line is lost or reordered.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

/** An output nobody reads must not hold the exit for longer than this. */
const EXIT_FLUSH_TIMEOUT_MS = 2000;

type Destination = DestinationStream & ReturnType<typeof pino.destination>;

/** Each operator logger's asynchronous destination, for exitWhenLogWritten. */
const destinations = new WeakMap<Logger, Destination>();

/** `destination`: a file descriptor or path; standard output unless told otherwise. */
export function operatorLogger(level: string, destination: number | string = 1): Logger {
  const stream = pino.destination({ dest: destination, sync: false });
  const logger = pino({ level, base: { component: 'admission-operator' } }, stream);
  destinations.set(logger, stream);
  return logger;
}

/**
 * Exits with `code` once every line `logger` took is written. pino's own flush at exit writes
 * what is still buffered, but not a write already handed to the thread pool: that one may then
 * land after the rest, or not at all (seen in a unit test: 20,000 lines, the last written was the
 * 130th). Ending the destination waits for it, then writes the rest in order.
 */
export function exitWhenLogWritten(logger: Logger, code: number, timeoutMs = EXIT_FLUSH_TIMEOUT_MS): void {
  const stream = destinations.get(logger);
  if (!stream) process.exit(code);
  // Once ending, the first call's exit is under way.
  destinations.delete(logger);
  const exit = (): never => process.exit(code);
  setTimeout(exit, timeoutMs);
  stream.once('close', exit);
  stream.once('error', exit);
  try {
    stream.end();
  } catch {
    exit();
  }
}
