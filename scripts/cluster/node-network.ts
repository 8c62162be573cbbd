/**
 * The node's pod network, all of it on this machine: a Linux bridge holding the node's address,
 * and pod addresses only inside the network namespaces containerd creates for pods. The bridge's
 * address is the node's InternalIP, the pods' default gateway and the API server's bind and
 * advertise address, so pods reach the API server (through the `kubernetes` Service, which
 * kube-proxy translates) and the API server reaches pods, without any packet leaving the host.
 *
 * Nothing routes or masquerades pod traffic elsewhere: the CNI bridge is no gateway (so the
 * bridge plugin never turns on IP forwarding), has no IP masquerade, and a FORWARD rule drops
 * whatever the pods send to an address outside their subnet, should forwarding be on anyway
 * (podman's own networks turn it on).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nodeRunDir, repoRoot } from './layout.js';

const execFileAsync = promisify(execFile);

export const nodeNetwork = {
  /** The Node's name; the kubelet authenticates as system:node:<name>. */
  nodeName: 'local-node',
  bridge: 'adm-cni0',
  podSubnet: '10.244.0.0/24',
  /** The bridge's address: node IP, the pods' gateway, the API server's address. */
  address: '10.244.0.1',
  prefixLength: 24,
} as const;

const GUARD_COMMENT = 'admission-operator local node: pod traffic stays on this machine';
const guardRule = [
  'FORWARD',
  '-s',
  nodeNetwork.podSubnet,
  '!',
  '-d',
  nodeNetwork.podSubnet,
  '-m',
  'comment',
  '--comment',
  GUARD_COMMENT,
  '-j',
  'DROP',
];

/** Runs a command; resolves with its stdout, rejects with its stderr in the message. */
export async function run(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')}: ${(stderr ?? '').trim() || message}`, {
      cause: error,
    });
  }
}

async function succeeds(command: string, args: string[]): Promise<boolean> {
  return run(command, args).then(
    () => true,
    () => false,
  );
}

/** Which checkout's cluster has the node: the bridge and the /run paths exist once per machine. */
const claimFile = join(nodeRunDir, 'checkout');

/**
 * Claims the machine's node for this checkout, or fails naming the checkout that has it. Another
 * checkout's `cluster:down` removes its claim; one left by a crash is removed with `cluster:down`
 * in the checkout it names.
 */
export async function claimNodeHost(): Promise<void> {
  const holder = (await readFile(claimFile, 'utf8').catch(() => '')).trim();
  if (holder && holder !== repoRoot) {
    throw new Error(
      `the node of the cluster of ${holder} is on this machine (bridge ${nodeNetwork.bridge}, ${nodeRunDir}); ` +
        `only one cluster with a node fits on a machine: run \`npm run cluster:down\` in ${holder} first`,
    );
  }
  await mkdir(nodeRunDir, { recursive: true });
  await writeFile(claimFile, `${repoRoot}\n`);
}

/** True unless another checkout has claimed the machine's node (then its host state is not ours to remove). */
export async function ownsNodeHost(): Promise<boolean> {
  const holder = (await readFile(claimFile, 'utf8').catch(() => '')).trim();
  return holder === '' || holder === repoRoot;
}

/** Creates the bridge with the node's address (before the API server binds to it) and the FORWARD guard. */
export async function setUpNodeNetwork(): Promise<void> {
  const { bridge, address, prefixLength } = nodeNetwork;
  if (!(await succeeds('ip', ['link', 'show', 'dev', bridge]))) {
    await run('ip', ['link', 'add', 'name', bridge, 'type', 'bridge']);
  }
  await run('ip', ['addr', 'replace', `${address}/${prefixLength}`, 'dev', bridge]);
  await run('ip', ['link', 'set', 'dev', bridge, 'up']);
  if (!(await succeeds('iptables', ['-C', ...guardRule]))) {
    await run('iptables', ['-I', ...guardRule]);
  }
}

/** Removes the bridge and the guard (the pods' veths went with their network namespaces). */
export async function tearDownNodeNetwork(): Promise<void> {
  while (await succeeds('iptables', ['-C', ...guardRule])) {
    await run('iptables', ['-D', ...guardRule]);
  }
  if (await succeeds('ip', ['link', 'show', 'dev', nodeNetwork.bridge])) {
    await run('ip', ['link', 'delete', 'dev', nodeNetwork.bridge]);
  }
}

/** The chains the kubelet itself makes (kube-proxy's go with `kube-proxy --cleanup`). */
const kubeletChains = ['KUBE-FIREWALL', 'KUBE-KUBELET-CANARY', 'KUBE-IPTABLES-HINT'];

/** Removes the kubelet's chains and the rules that jump to them, for IPv4 and IPv6, in every table. */
export async function removeKubeletChains(): Promise<void> {
  for (const tool of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle']) {
      const rules = (await run(tool, ['-t', table, '-S']).catch(() => '')).split('\n');
      for (const rule of rules) {
        const words = rule.split(' ');
        const target = words[words.indexOf('-j') + 1] ?? '';
        if (words[0] === '-A' && !kubeletChains.includes(words[1] ?? '') && kubeletChains.includes(target)) {
          await run(tool, ['-t', table, '-D', ...words.slice(1)]).catch(() => undefined);
        }
      }
      for (const chain of kubeletChains) {
        if (!rules.includes(`-N ${chain}`)) continue;
        await run(tool, ['-t', table, '-F', chain]).catch(() => undefined);
        await run(tool, ['-t', table, '-X', chain]).catch(() => undefined);
      }
    }
  }
}

/** The CNI configuration containerd reads: must exist before the kubelet starts, or the node stays NotReady. */
export function cniConfig(ipamDataDir: string): object {
  const { bridge, podSubnet, address } = nodeNetwork;
  return {
    cniVersion: '1.0.0',
    name: 'local-node',
    plugins: [
      {
        type: 'bridge',
        bridge,
        // No gateway: the bridge plugin would turn on IP forwarding for the whole host.
        isGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: podSubnet, gateway: address }]],
          routes: [{ dst: '0.0.0.0/0', gw: address }],
          dataDir: ipamDataDir,
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}
