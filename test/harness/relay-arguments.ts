/** The relay process's arguments (relay.ts), parsed and checked: a pure function, unit-tested. */

export interface RelayArguments {
  loopbackUp: boolean;
  /** Listen on 127.0.0.1:port (0: any), pipe to the Unix socket. */
  tcp: { port: number; socket: string }[];
  /** Listen on the Unix socket, pipe to 127.0.0.1:port. */
  unix: { socket: string; port: number }[];
  pidFile: string | undefined;
  /** Where the command's stdout and stderr go (a file: its log never passes through a pipe). */
  logFile: string | undefined;
  command: string[];
}

function port(text: string, flag: string, allowZero: boolean): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > 65535 || (!allowZero && value === 0))
    throw new Error(`${flag}: the port must be an integer from ${allowZero ? 0 : 1} to 65535, got "${text}"`);
  return value;
}

/**
 * `--tcp=PORT:SOCKET`, `--unix=SOCKET:PORT`, `--loopback-up`, `--pid-file=PATH`, `--log-file=PATH`,
 * then `-- command...`.
 */
export function parseRelayArguments(argv: readonly string[]): RelayArguments {
  const parsed: RelayArguments = {
    loopbackUp: false,
    tcp: [],
    unix: [],
    pidFile: undefined,
    logFile: undefined,
    command: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      parsed.command = argv.slice(i + 1);
      break;
    }
    if (arg === '--loopback-up') {
      parsed.loopbackUp = true;
      continue;
    }
    const match = /^--(tcp|unix|pid-file|log-file)=(.*)$/.exec(arg);
    if (!match)
      throw new Error(
        `relay: unknown argument "${arg}" (--tcp, --unix, --loopback-up, --pid-file, --log-file, --)`,
      );
    const [, flag = '', value = ''] = match;
    if (flag === 'pid-file' || flag === 'log-file') {
      if (value === '') throw new Error(`--${flag}: a path is required`);
      if (flag === 'pid-file') parsed.pidFile = value;
      else parsed.logFile = value;
      continue;
    }
    if (flag === 'tcp') {
      const colon = value.indexOf(':');
      const socket = value.slice(colon + 1);
      if (colon < 0 || socket === '') throw new Error(`--tcp takes PORT:SOCKET, got "${value}"`);
      parsed.tcp.push({ port: port(value.slice(0, colon), '--tcp', true), socket });
    } else {
      const colon = value.lastIndexOf(':');
      const socket = value.slice(0, colon);
      if (colon < 0 || socket === '') throw new Error(`--unix takes SOCKET:PORT, got "${value}"`);
      parsed.unix.push({ socket, port: port(value.slice(colon + 1), '--unix', false) });
    }
  }
  return parsed;
}
