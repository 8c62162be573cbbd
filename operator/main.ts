/**
 * The image's entry point: the operator process, on the system clock, against $KUBECONFIG or the
 * in-cluster config. It reads its options from the command line and the environment, and nothing
 * that only tests should set; `npm start` (scripts/start-local.ts) adds the local control plane.
 * A subcommand (`admit`) runs instead of the operator.
 */
import { runSubcommand } from './cli/dispatch.js';
import { startOperatorProcess } from './startup.js';

if (!(await runSubcommand(process.argv.slice(2))))
  await startOperatorProcess({ argv: process.argv.slice(2), env: process.env });
