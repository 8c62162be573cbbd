/**
 * Whether an API server serves streaming lists (a watch with `sendInitialEvents=true`), asked of it
 * directly, and when Kubernetes turns them on by default (docs/kubernetes-versions.md).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { apiGet, ApiStatusError, forEachLine } from '../../operator/kube/api-stream.js';

/**
 * The WatchList feature gate's default in kube-apiserver: alpha and off to 1.31, beta and on in 1.32,
 * off again in 1.33 (the streaming encoders were preferred), on from 1.34 (Kubernetes' own
 * pkg/features/kube_features.go).
 */
export function streamingListsOnByDefault(minor: number): boolean {
  return minor === 32 || minor >= 34;
}

/** Lists the ConfigMaps of `namespace` as a streaming list: true when the server ends it with its bookmark. */
export async function serverStreamsLists(kubeConfig: KubeConfig, namespace = 'default'): Promise<boolean> {
  const abort = new AbortController();
  const query = new URLSearchParams({
    watch: '1',
    sendInitialEvents: 'true',
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: 'true',
    timeoutSeconds: '10',
  });
  let ended = false;
  try {
    const response = await apiGet(
      kubeConfig,
      `/api/v1/namespaces/${namespace}/configmaps`,
      query,
      abort.signal,
    );
    await forEachLine(response, (line) => {
      const event = JSON.parse(line) as { type?: string; object?: { metadata?: { annotations?: object } } };
      const annotations = (event.object?.metadata?.annotations ?? {}) as Record<string, string>;
      if (event.type === 'BOOKMARK' && annotations['k8s.io/initial-events-end'] === 'true') {
        ended = true;
        abort.abort();
      }
    }).catch((error: unknown) => {
      if (!ended) throw error;
    });
    return ended;
  } catch (error) {
    // What the reflector takes for a refusal (operator/kube/reflector.ts).
    if (error instanceof ApiStatusError && [400, 403, 405, 422].includes(error.code)) return false;
    throw error;
  }
}
