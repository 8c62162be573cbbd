/**
 * Subcommands of the `admission-operator` executable. With none (or a flag first), the process is
 * the operator, as it has always been; `admit` runs the offline admission check and `audit` the
 * read-only audit of a cluster's existing objects, and exit. `--version` answers for all of them.
 */
import { text } from 'node:stream/consumers';
import type { AdmitIo } from './admit/main.js';
import { versionLine } from '../version.js';

type CommandMain = (argv: readonly string[], io: AdmitIo) => Promise<number>;

interface Subcommand {
  /** One line for the top-level --help. */
  summary: string;
  /** Loaded only when named: the operator never pays for the commands' code. */
  load: () => Promise<CommandMain>;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  admit: {
    summary: 'run the webhooks on manifests offline, as the API server would (CI; also `kubectl admit`)',
    load: async () => (await import('./admit/main.js')).admitMain,
  },
  audit: {
    summary: "list a cluster's existing objects the rules would refuse or change (read-only)",
    load: async () => (await import('./audit/main.js')).auditMain,
  },
};

/** The subcommands, one line each, for the operator's --help. */
export function subcommandsHelp(): string[] {
  return Object.entries(SUBCOMMANDS).map(([name, { summary }]) => `  ${name.padEnd(30)} ${summary}`);
}

/** Runs the subcommand `argv` names (or prints the version) and exits; resolves false when `argv` names none. */
export async function runSubcommand(argv: readonly string[]): Promise<boolean> {
  const subcommand = argv[0] === undefined ? undefined : SUBCOMMANDS[argv[0]];
  if (!subcommand) {
    // As --help, --version may stand anywhere among the operator's flags.
    if (!argv.includes('--version')) return false;
    process.stdout.write(`${versionLine()}\n`);
    process.exit(0);
  }
  const main = await subcommand.load();
  const code = await main(argv.slice(1), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => text(process.stdin),
    env: process.env,
  });
  // Writes to pipes and files are synchronous on Linux; exiting also ends any socket a cluster read left open.
  process.exit(code);
}
