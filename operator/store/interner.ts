/**
 * One copy of each string that many records repeat (a namespace, a quota name, a list of resource
 * names): JSON.parse makes a new string for every occurrence, and 150,000 pods in 10,000
 * namespaces would otherwise keep 150,000 copies of 10,000 names. Bounded: once it holds
 * `capacity` values it starts over, so names that come and go cannot grow it without end.
 */
export class Interner<T> {
  private readonly values = new Map<string, T>();

  constructor(private readonly capacity = 65_536) {}

  /** The kept value for `key`, or `value` (now kept) when there is none. */
  intern(key: string, value: T): T {
    const kept = this.values.get(key);
    if (kept !== undefined) return kept;
    if (this.values.size >= this.capacity) this.values.clear();
    this.values.set(key, value);
    return value;
  }
}

/** Interns strings by themselves. */
export class StringInterner {
  private readonly interner: Interner<string>;

  constructor(capacity?: number) {
    this.interner = new Interner<string>(capacity);
  }

  intern(value: string): string {
    return this.interner.intern(value, value);
  }
}
