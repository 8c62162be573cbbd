/**
 * The executable's subcommands, named with their one-line summaries: the operator's --help lists
 * them, and cli/dispatch.ts loads the one named. Kept apart from the loaders so the operator's
 * options reach no code of cli/.
 */
const SUMMARIES = {
  admit: 'run the webhooks on manifests offline, as the API server would (CI; also `kubectl admit`)',
  audit: "list a cluster's existing objects the rules would refuse or change (read-only)",
} as const;

export type SubcommandName = keyof typeof SUMMARIES;

export const isSubcommand = (name: string): name is SubcommandName => Object.hasOwn(SUMMARIES, name);

/** The subcommands, one line each, for the operator's --help. */
export function subcommandsHelp(): string[] {
  return Object.entries(SUMMARIES).map(([name, summary]) => `  ${name.padEnd(30)} ${summary}`);
}
