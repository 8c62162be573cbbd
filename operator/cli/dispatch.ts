/**
 * Subcommands of the `admission-operator` executable. With none (or a flag first), the process is
 * the operator, as it has always been; `admit` runs the offline admission check and `audit` the
 * read-only audit of a cluster's existing objects, and exit.
 */
import { text } from 'node:stream/consumers';
import type { AdmitIo } from './admit/main.js';

const SUBCOMMANDS: Record<string, () => Promise<(argv: readonly string[], io: AdmitIo) => Promise<number>>> =
  {
    // Loaded only when named: the operator never pays for the commands' code.
    admit: async () => (await import('./admit/main.js')).admitMain,
    audit: async () => (await import('./audit/main.js')).auditMain,
  };

/** Runs the subcommand `argv` names and exits; resolves false when `argv` names none. */
export async function runSubcommand(argv: readonly string[]): Promise<boolean> {
  const load = argv[0] === undefined ? undefined : SUBCOMMANDS[argv[0]];
  if (!load) return false;
  const main = await load();
  const code = await main(argv.slice(1), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => text(process.stdin),
    env: process.env,
  });
  // Writes to pipes and files are synchronous on Linux; exiting also ends any socket a cluster read left open.
  process.exit(code);
}
