/**
 * `npm start` and the image's entry point: the operator process, on the system clock. It reads
 * its options from the command line and the environment, and nothing that only tests should set.
 */
import { startOperatorProcess } from './startup.js';

await startOperatorProcess({ argv: process.argv.slice(2), env: process.env });
