/** `host:port` addresses, with an IPv6 host in brackets, as replicas publish them on the Lease. */

/** The host and port of `address`, or undefined when it is not host:port with a port in 1-65535. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(address);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** host:port, with an IPv6 host in brackets. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
