/**
 * Starts relay.ts as a process of its own (in a new network namespace when asked, with a command
 * inside it) and stops it with everything it started: the relay leads a process group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/cluster/layout.js';
import { waitFor } from './cluster.js';

export interface RelayProcess {
  child: ChildProcess;
  /** The port each `--tcp=PORT:SOCKET` listens on, by its socket. */
  tcpPorts: Map<string, number>;
  /** The command's pid, when the relay started one (its --pid-file). */
  commandPid: () => Promise<number>;
  /** SIGKILL to the whole group (relay and command); resolves once the relay has exited. */
  stop: () => Promise<void>;
  exited: Promise<number | null>;
}

export interface RelayOptions {
  /** relay.ts's arguments (see relay-arguments.ts). */
  args: string[];
  /** Run it, and its command, in a new network namespace (`unshare -n`: root, as the node's tools need). */
  netns?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The --pid-file the arguments name, when they start a command. */
  pidFile?: string;
}

export async function startRelay(options: RelayOptions): Promise<RelayProcess> {
  const node = [
    process.execPath,
    '--import',
    'tsx',
    join(repoRoot, 'test', 'harness', 'relay.ts'),
    ...options.args,
  ];
  const [command, ...args] = options.netns ? ['unshare', '-n', '--', ...node] : node;
  const child = spawn(command!, args, {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const exited = new Promise<number | null>((resolvePromise) => {
    child.on('exit', (code) => {
      resolvePromise(code);
    });
  });
  const expected = options.args.filter((arg) => arg.startsWith('--tcp=') || arg.startsWith('--unix=')).length;
  const tcpPorts = new Map<string, number>();
  let listening = 0;
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const tcp = /^tcp \d+:(\S+) (\d+)$/.exec(line);
      if (tcp) tcpPorts.set(tcp[1]!, Number(tcp[2]));
      if (tcp || line.startsWith('unix ')) listening += 1;
    }
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await exited;
  };
  try {
    await waitFor(
      'the relay to listen',
      () => {
        if (child.exitCode !== null) throw new Error(`the relay exited (${child.exitCode})`);
        return Promise.resolve(listening === expected);
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const commandPid = async (): Promise<number> => {
    const file = options.pidFile;
    if (!file) throw new Error('the relay started no command');
    return waitFor(
      'the command pid',
      async () => Number(await readFile(file, 'utf8').catch(() => '')) || undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 20,
      },
    );
  };
  return { child, tcpPorts, commandPid, stop, exited };
}
