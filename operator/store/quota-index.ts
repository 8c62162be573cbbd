/**
 * ElasticQuotas by name, with the indexes the quota rules walk: children by parent, and the
 * quota each namespace is bound to (the namespaces annotation). Map-shaped (set/delete) so the
 * store's watch helper feeds it like any other index.
 */
import type { QuotaView } from '../../webhook/rules/koordinator/quota/quota-view.js';

/** What of a quota decides which pods it governs. */
const reachKey = (quota: QuotaView): string =>
  JSON.stringify([
    quota.namespace,
    quota.namespaces,
    quota.isParent,
    quota.treeId,
    Object.keys(quota.max).sort(),
  ]);

export class QuotaIndex {
  private readonly byName = new Map<string, QuotaView>();
  private readonly childrenByParent = new Map<string, Set<string>>();
  private readonly byNamespace = new Map<string, string>();
  private readonly byTreeId = new Map<string, Set<string>>();

  /**
   * Moves whenever a change can alter which quota a pod resolves to: a quota appearing or going,
   * changing namespace, or binding other namespaces. Status and bound updates leave it alone, so
   * the frequent ones do not make the store re-resolve every pod.
   */
  bindingsVersion = 0;

  /**
   * Moves whenever a change can alter which namespaces' pods the quotas govern (what the webhook
   * configurations are narrowed to): a quota appearing or going, or its namespace, bindings,
   * parent flag, tree or max keys changing. Status updates, the most frequent, leave it alone.
   */
  reachVersion = 0;

  set(name: string, quota: QuotaView): void {
    const previous = this.byName.get(name);
    if (!previous || reachKey(previous) !== reachKey(quota)) this.reachVersion++;
    if (
      previous?.namespace !== quota.namespace ||
      previous.namespaces.join('\0') !== quota.namespaces.join('\0')
    ) {
      this.bindingsVersion++;
    }
    this.remove(name);
    this.byName.set(name, quota);
    let children = this.childrenByParent.get(quota.parent);
    if (!children) this.childrenByParent.set(quota.parent, (children = new Set()));
    children.add(name);
    for (const namespace of quota.namespaces) this.byNamespace.set(namespace, name);
    if (quota.treeId) {
      let members = this.byTreeId.get(quota.treeId);
      if (!members) this.byTreeId.set(quota.treeId, (members = new Set()));
      members.add(name);
    }
  }

  delete(name: string): void {
    if (this.byName.has(name)) {
      this.bindingsVersion++;
      this.reachVersion++;
    }
    this.remove(name);
  }

  private remove(name: string): void {
    const previous = this.byName.get(name);
    if (!previous) return;
    this.byName.delete(name);
    this.childrenByParent.get(previous.parent)?.delete(name);
    if (previous.treeId) this.byTreeId.get(previous.treeId)?.delete(name);
    for (const namespace of previous.namespaces) {
      if (this.byNamespace.get(namespace) === name) this.byNamespace.delete(namespace);
    }
  }

  values(): Iterable<QuotaView> {
    return this.byName.values();
  }

  get(name: string): QuotaView | undefined {
    return this.byName.get(name);
  }

  children(name: string): QuotaView[] {
    return [...(this.childrenByParent.get(name) ?? [])].flatMap((child) => this.byName.get(child) ?? []);
  }

  /** The tree as the rules see it, for the debug endpoint. */
  snapshot(): {
    quotas: Record<string, QuotaView>;
    children: Record<string, string[]>;
    trees: Record<string, string[]>;
  } {
    const sorted = (index: Map<string, Set<string>>): Record<string, string[]> =>
      Object.fromEntries(
        [...index].filter(([, set]) => set.size > 0).map(([key, set]) => [key, [...set].sort()]),
      );
    return {
      quotas: Object.fromEntries(this.byName),
      children: sorted(this.childrenByParent),
      trees: sorted(this.byTreeId),
    };
  }

  boundTo(namespace: string): QuotaView | undefined {
    const name = this.byNamespace.get(namespace);
    return name === undefined ? undefined : this.byName.get(name);
  }
}
