/**
 * A relay process: TCP ports and Unix sockets piped into each other, optionally around a command it
 * starts and outlives by nothing. Two of these connect a webhook process in a network namespace of
 * its own (koord-manager listens on fixed ports, all addresses: two replicas on one machine need a
 * namespace each, as pods have) to the host's API server and the host's balancer: a Unix socket is a
 * file, and files cross network namespaces.
 *
 *   tsx test/harness/relay.ts [--loopback-up] [--tcp=PORT:SOCKET]... [--unix=SOCKET:PORT]...
 *                             [--pid-file=PATH] [--log-file=PATH] [-- command args...]
 *
 * --tcp listens on 127.0.0.1:PORT (0: any free port, printed as `tcp PORT:SOCKET <port>`) and pipes
 * each connection to SOCKET; --unix listens on SOCKET and pipes each connection to 127.0.0.1:PORT.
 * --loopback-up brings `lo` up first (a new network namespace has it down). With a command, the
 * relay starts it once listening, writes its pid to --pid-file, and exits with it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { openSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { parseRelayArguments, type RelayArguments } from './relay-arguments.js';

function pipe(client: Socket, upstream: Socket): void {
  client.pipe(upstream);
  upstream.pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
}

function listen(server: Server, target: number | string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      resolvePromise();
    };
    // The API server's burst of calls at once must not overflow the accept queue.
    if (typeof target === 'number') server.listen({ host: '127.0.0.1', port: target, backlog: 4096 }, done);
    else server.listen({ path: target, backlog: 4096 }, done);
  });
}

async function main(args: RelayArguments): Promise<void> {
  if (args.loopbackUp) {
    const up = spawnSync('ip', ['link', 'set', 'lo', 'up'], { stdio: 'inherit' });
    if (up.status !== 0) throw new Error('ip link set lo up failed');
  }
  for (const { port, socket } of args.tcp) {
    const server = createServer({ noDelay: true }, (client) => {
      pipe(client, connect({ path: socket }));
    });
    await listen(server, port);
    console.log(`tcp ${port}:${socket} ${(server.address() as AddressInfo).port}`);
  }
  for (const { socket, port } of args.unix) {
    rmSync(socket, { force: true });
    const server = createServer((client) => {
      pipe(client, connect({ host: '127.0.0.1', port, noDelay: true }));
    });
    await listen(server, socket);
    console.log(`unix ${socket}:${port}`);
  }
  const [command, ...rest] = args.command;
  if (!command) return;
  const log = args.logFile ? openSync(args.logFile, 'a') : 'inherit';
  const child = spawn(command, rest, { stdio: ['ignore', log, log] });
  if (args.pidFile && child.pid !== undefined) writeFileSync(args.pidFile, String(child.pid));
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.on(signal, () => {
      child.kill(signal);
    });
  child.on('exit', (code, signal) => {
    process.exit(code ?? (signal ? 128 : 1));
  });
}

await main(parseRelayArguments(process.argv.slice(2)));
