/**
 * The oldest Kubernetes the operator runs on, and the check of the API server's /version against
 * it. The chart's `kubeVersion` says the same (a unit test holds them equal).
 *
 * 1.30: the operator writes matchConditions on three webhooks (mutate-pod, validate-configmap,
 * mutate-pod-gpu-class). They are GA and always on from 1.30; on 1.28 and 1.29 a cluster may turn
 * their beta gate off, and an API server with it off drops the field: validate-configmap
 * (failurePolicy Fail) would be called for every ConfigMap write in the cluster, and the
 * configurations would never match what the operator wrote.
 */
export const MINIMUM_KUBERNETES = { major: 1, minor: 30 } as const;

export interface KubernetesVersion {
  major: number;
  minor: number;
}

/** What /version answers that the check reads (client-node's VersionInfo). */
export interface ServerVersionInfo {
  gitVersion?: string;
  major?: string;
  minor?: string;
}

export function formatVersion(version: KubernetesVersion): string {
  return `v${version.major}.${version.minor}`;
}

/**
 * Major and minor from gitVersion (`v1.29.3`, `v1.30.0-gke.1`, `v1.31.2-eks-7f9249a`), else from the
 * major and minor fields, which some distributions suffix with `+` (`"31+"`); undefined when
 * neither reads as numbers.
 */
function parseKubernetesVersion(info: ServerVersionInfo): KubernetesVersion | undefined {
  const fromGit = /^v?(\d+)\.(\d+)(?:[.+-]|$)/.exec(info.gitVersion ?? '');
  if (fromGit?.[1] && fromGit[2]) return { major: Number(fromGit[1]), minor: Number(fromGit[2]) };
  const major = /^(\d+)\+?$/.exec(info.major ?? '')?.[1];
  const minor = /^(\d+)\+?$/.exec(info.minor ?? '')?.[1];
  if (major === undefined || minor === undefined) return undefined;
  return { major: Number(major), minor: Number(minor) };
}

function isOlder(version: KubernetesVersion, than: KubernetesVersion): boolean {
  return version.major !== than.major ? version.major < than.major : version.minor < than.minor;
}

export type VersionCheck =
  | { verdict: 'supported'; version: KubernetesVersion; shown: string }
  | { verdict: 'too-old'; message: string }
  /** A version that reads as nothing is not refused: the operator cannot know it is too old. */
  | { verdict: 'unknown'; shown: string };

/** The server's version against MINIMUM_KUBERNETES. */
export function checkKubernetesVersion(
  info: ServerVersionInfo,
  minimum: KubernetesVersion = MINIMUM_KUBERNETES,
): VersionCheck {
  const shown = (info.gitVersion ?? `${info.major ?? '?'}.${info.minor ?? '?'}`).slice(0, 64);
  const version = parseKubernetesVersion(info);
  if (!version) return { verdict: 'unknown', shown };
  if (isOlder(version, minimum)) {
    return {
      verdict: 'too-old',
      message:
        `Kubernetes ${shown} is older than ${formatVersion(minimum)}, the oldest this operator supports ` +
        `(the chart's kubeVersion); upgrade the cluster to ${formatVersion(minimum)} or later`,
    };
  }
  return { verdict: 'supported', version, shown };
}
