/** Server-side apply of YAML documents: how local mode installs the CRDs, and how tests create objects. */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

/** Applies every document of `yamlText` (into `namespace` where a document names none). */
export async function applyYaml(
  kubeConfig: KubeConfig,
  yamlText: string,
  fieldManager: string,
  namespace?: string,
): Promise<KubernetesObject[]> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  const applied: KubernetesObject[] = [];
  for (const doc of loadAllYaml(yamlText) as (KubernetesObject | null)[]) {
    if (doc === null) continue;
    if (namespace && doc.metadata && !doc.metadata.namespace) doc.metadata.namespace = namespace;
    applied.push(
      await api.patch(doc, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply),
    );
  }
  return applied;
}

/** Applies every *.yaml file of a folder, in name order. */
export async function applyFolder(
  kubeConfig: KubeConfig,
  folder: string,
  fieldManager: string,
): Promise<string[]> {
  const files = (await readdir(folder)).filter((file) => file.endsWith('.yaml')).sort();
  for (const file of files)
    await applyYaml(kubeConfig, await readFile(join(folder, file), 'utf8'), fieldManager);
  return files;
}
