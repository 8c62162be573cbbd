/**
 * Subcommands of the `admission-operator` executable. With none (or a flag first), the process is
 * the operator, as it has always been; `admit` runs the offline admission check and `audit` the
 * read-only audit of a cluster's existing objects, and exit. `--version` answers for all of them.
 */
import { text } from 'node:stream/consumers';
import type { AdmitIo } from './admit/main.js';
import { isSubcommand, type SubcommandName } from '../config/subcommands.js';
import { versionLine } from '../version.js';

type CommandMain = (argv: readonly string[], io: AdmitIo) => Promise<number>;

/**
 * Loaded only when named, so the operator's process never loads the commands' code (arguments,
 * manifests, output): only this dispatcher reaches it; the admission chain the periodic audit
 * shares with the commands lives in webhook/chain/.
 */
const LOADERS: Record<SubcommandName, () => Promise<CommandMain>> = {
  admit: async () => (await import('./admit/main.js')).admitMain,
  audit: async () => (await import('./audit/main.js')).auditMain,
};

/** Runs the subcommand `argv` names (or prints the version) and exits; resolves false when `argv` names none. */
export async function runSubcommand(argv: readonly string[]): Promise<boolean> {
  const subcommand = argv[0] !== undefined && isSubcommand(argv[0]) ? LOADERS[argv[0]] : undefined;
  if (!subcommand) {
    // As --help, --version may stand anywhere among the operator's flags.
    if (!argv.includes('--version')) return false;
    process.stdout.write(`${versionLine()}\n`);
    process.exit(0);
  }
  const main = await subcommand();
  const code = await main(argv.slice(1), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => text(process.stdin),
    env: process.env,
  });
  // Writes to pipes and files are synchronous on Linux; exiting also ends any socket a cluster read left open.
  process.exit(code);
}
