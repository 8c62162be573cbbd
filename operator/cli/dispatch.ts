/**
 * Subcommands of the `admission-operator` executable. With none (or a flag first), the process is
 * the operator, as it has always been; `admit` runs the offline admission check and exits.
 */
import { text } from 'node:stream/consumers';

/** Runs the subcommand `argv` names and exits; resolves false when `argv` names none. */
export async function runSubcommand(argv: readonly string[]): Promise<boolean> {
  if (argv[0] !== 'admit') return false;
  // Loaded only here: the operator never pays for the command's code.
  const { admitMain } = await import('./admit/main.js');
  const code = await admitMain(argv.slice(1), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => text(process.stdin),
    env: process.env,
  });
  // Writes to pipes and files are synchronous on Linux; exiting also ends any socket a cluster read left open.
  process.exit(code);
}
