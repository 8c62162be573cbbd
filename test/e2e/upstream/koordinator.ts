/**
 * Koordinator v1.8.0 as its users run it, on the local node: koord-manager built from its Go module
 * into an image (scripts/upstream/koord-manager.ts), installed by Koordinator's official chart
 * (../shared/upstream, unchanged) with its own webhook configurations, Service and certificates.
 *
 * Only koord-manager runs: the chart's other workloads (koord-scheduler, koord-descheduler,
 * koordlet, the device daemon) are other binaries this suite does not build, so their replicas are
 * 0 or their DaemonSets select no node, by the chart's own values. The chart hard-codes
 * `imagePullPolicy: Always`, and the node has no registry: a post-renderer changes that field alone.
 */
import { join } from 'node:path';
import { repoRoot } from '../../../scripts/cluster/layout.js';
import { koordinatorChart } from '../../harness/koord-manager.js';
import { loadBinaryImage } from '../../../scripts/upstream/binary-image.js';
import { ensureKoordManager, KOORD_MANAGER_VERSION } from '../../../scripts/upstream/koord-manager.js';

export const koordinatorRelease = 'koordinator';
/** The chart's `installation.namespace`, where koord-manager runs. */
export const koordinatorNamespace = 'koordinator-system';
const postRenderer = join(repoRoot, 'test', 'e2e', 'upstream', 'pull-if-not-present.sh');

/** The chart's `imageRepositoryHost`: no registry answers it, the image is imported into the node. */
const IMAGE_HOST = 'localhost';
const IMAGE_REPOSITORY = 'koordinator-sh/koord-manager';

/**
 * koord-manager's gates while its webhooks decide: its defaults, plus quota admission (off by
 * default; without it its pod webhook checks no quota, and a user who counts on Koordinator's
 * quota at admission turns it on).
 */
export const KOORDINATOR_GATES_ON = 'EnableQuotaAdmission=true';
/** The supported switch (docs/beside-upstream.md), in the migration's order: its mutating webhooks off first. */
export const KOORDINATOR_GATES_MUTATING_OFF = `${KOORDINATOR_GATES_ON},PodMutatingWebhook=false,ElasticMutatingWebhook=false`;
/** Then its validating ones too: every webhook on by default off, the rest as before. */
export const KOORDINATOR_GATES_OFF = `${KOORDINATOR_GATES_MUTATING_OFF},PodValidatingWebhook=false,ElasticValidatingWebhook=false`;

/**
 * An affinity no node satisfies, so the chart's DaemonSets of other binaries place no pod. Their
 * `nodeAffinity` values are written under the pod's `affinity:` as they are (koord-manager's goes
 * under `affinity.nodeAffinity`), hence the extra level.
 */
const NO_NODE = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'e2e.admission-operator.io/no-such-node', operator: 'Exists' }] },
      ],
    },
  },
};

/** Builds koord-manager (or finds it built) and imports its image into the node. */
export async function loadKoordManagerImage(log: (line: string) => void): Promise<void> {
  const binary = await ensureKoordManager(log);
  await loadBinaryImage(
    {
      image: `${IMAGE_HOST}/${IMAGE_REPOSITORY}:${KOORD_MANAGER_VERSION}`,
      binary,
      path: '/koord-manager',
    },
    log,
  );
}

/**
 * `helm upgrade --install` arguments (after the helm binary) for Koordinator's chart with `gates`
 * as its `featureGates`: one koord-manager (the 2-core node runs ours beside it), the chart's
 * failure policies and timeouts as they ship.
 */
export function koordinatorHelmArguments(gates: string): string[] {
  return [
    'upgrade',
    '--install',
    koordinatorRelease,
    koordinatorChart,
    '--namespace',
    'default',
    '--post-renderer',
    postRenderer,
    '--set',
    `imageRepositoryHost=${IMAGE_HOST}`,
    '--set',
    `manager.image.repository=${IMAGE_REPOSITORY}`,
    '--set',
    `manager.image.tag=${KOORD_MANAGER_VERSION}`,
    '--set',
    'manager.replicas=1',
    '--set',
    'manager.resources.requests.cpu=100m',
    '--set',
    'scheduler.replicas=0',
    '--set',
    'descheduler.replicas=0',
    '--set-json',
    `koordlet.nodeAffinity=${JSON.stringify(NO_NODE)}`,
    '--set-json',
    `deviceDaemon.nodeAffinity=${JSON.stringify(NO_NODE)}`,
    '--set-string',
    `featureGates=${gates.replaceAll(',', '\\,')}`,
  ];
}
