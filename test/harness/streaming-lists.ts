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

/**
 * A streaming list of the collection at `path`, every event parsed and nothing kept: the time to its
 * closing bookmark and the objects it sent; undefined where the server refuses streaming lists.
 */
export async function rawStreamingList(
  kubeConfig: KubeConfig,
  path: string,
): Promise<{ ms: number; objects: number } | undefined> {
  const started = performance.now();
  const abort = new AbortController();
  const query = new URLSearchParams({
    watch: '1',
    sendInitialEvents: 'true',
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: 'true',
    timeoutSeconds: '600',
  });
  let objects = 0;
  let ms: number | undefined;
  try {
    const response = await apiGet(kubeConfig, path, query, abort.signal);
    await forEachLine(response, (line) => {
      const event = JSON.parse(line) as { type?: string; object?: { metadata?: { annotations?: object } } };
      const annotations = (event.object?.metadata?.annotations ?? {}) as Record<string, string>;
      if (event.type !== 'BOOKMARK') objects++;
      else if (annotations['k8s.io/initial-events-end'] === 'true') {
        ms = performance.now() - started;
        abort.abort();
      }
    }).catch((error: unknown) => {
      if (ms === undefined) throw error;
    });
  } catch (error) {
    // What the reflector takes for a refusal (operator/kube/reflector.ts).
    if (error instanceof ApiStatusError && [400, 403, 405, 422].includes(error.code)) return undefined;
    throw error;
  }
  if (ms === undefined) throw new Error(`the streaming list of ${path} ended before its closing bookmark`);
  return { ms, objects };
}

/** Whether the server serves streaming lists, asked with one of a namespace's ConfigMaps. */
export async function serverStreamsLists(kubeConfig: KubeConfig, namespace = 'default'): Promise<boolean> {
  return (await rawStreamingList(kubeConfig, `/api/v1/namespaces/${namespace}/configmaps`)) !== undefined;
}
