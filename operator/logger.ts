/**
 * The operator's logger. Every admission decision is a log line, so a blocking write per line
 * would put the terminal or pipe on the admission path: lines are written asynchronously
 * instead, and pino writes out whatever is still buffered, synchronously, when the process exits
 * (process.exit included, as on SIGTERM), so no line is lost.
 */
import { pino, type Logger } from 'pino';

/** `destination`: a file descriptor or path; standard output unless told otherwise. */
export function operatorLogger(level: string, destination: number | string = 1): Logger {
  return pino(
    { level, base: { component: 'admission-operator' } },
    pino.destination({ dest: destination, sync: false }),
  );
}
