/**
 * Small indexes the store keeps beside its plain maps: a map whose values are wanted in key
 * order, and a map whose values are wanted by a group (e.g. a quota tree).
 */

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Values in key order, sorted once per change rather than once per admission request. */
export class SortedIndex<V> {
  private readonly entries = new Map<string, V>();
  private sorted: readonly V[] | undefined;

  set(key: string, value: V): void {
    this.entries.set(key, value);
    this.sorted = undefined;
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.sorted = undefined;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  values(): readonly V[] {
    this.sorted ??= [...this.entries.keys()].sort(byteOrder).map((key) => this.entries.get(key) as V);
    return this.sorted;
  }
}

/** Values looked up by group, each group in key order; a value moves when its group changes. */
export class GroupedIndex<V> {
  private readonly groupOf = new Map<string, string>();
  private readonly groups = new Map<string, SortedIndex<V>>();

  constructor(private readonly group: (value: V) => string) {}

  set(key: string, value: V): void {
    this.delete(key);
    const name = this.group(value);
    this.groupOf.set(key, name);
    let members = this.groups.get(name);
    if (!members) this.groups.set(name, (members = new SortedIndex<V>()));
    members.set(key, value);
  }

  delete(key: string): void {
    const name = this.groupOf.get(key);
    if (name === undefined) return;
    this.groupOf.delete(key);
    const members = this.groups.get(name);
    members?.delete(key);
    if (members?.size === 0) this.groups.delete(name);
  }

  members(group: string): readonly V[] {
    return this.groups.get(group)?.values() ?? [];
  }
}
