/**
 * The hostile AdmissionReview generator. Case `index` of seed `seed` is a pure function of
 * the two, so any case can be replayed alone (`--seed S --case K`).
 *
 * A case starts from a valid review of one webhook path (seeds.ts) and then either mutates it
 * (wrong types, nulls, huge and tiny numbers and quantities, deep nesting, long strings,
 * duplicate keys, invalid UTF-8, removed fields, many entries, keys named like Object.prototype's
 * members in any map, JSON and YAML in strings included), breaks its envelope, or sends it
 * in a hostile way (oversized, chunked, dribbled, wrong Content-Type, a length declared past the
 * limit, a caller hanging up). JSON that JS objects
 * cannot express (duplicate keys, number literals like 1e50000000, raw bytes) is written as
 * text through tokens replaced after JSON.stringify.
 */
import type { JsonObject, JsonValue } from '../../webhook/admission/types.js';
import { caseSeed, mulberry32, type Rng } from './prng.js';
import { PROTOTYPE_KEYS, putOwn, withDrawnKey } from './prototype-keys.js';
import { seeds, type HotKind, type Seed } from './seeds.js';

/**
 * How the client sends a case: in one write, chunked, dribbled (finished or stalled halfway),
 * with a Content-Length declaring more than is sent (`declaredLength`), or hanging up halfway
 * through the body or right after it.
 */
export type Transport =
  'plain' | 'chunked' | 'slow-complete' | 'slow-stall' | 'declared' | 'abort-mid-body' | 'abort-after-body';

/**
 * What a correct server answers:
 *   decision  200 with an AdmissionReview (a valid review, sent in any acceptable way)
 *   review    200 with an AdmissionReview, or a 4xx naming what is wrong (hostile content)
 *   status    exactly `status` (malformed envelopes, oversized bodies, wrong Content-Type...)
 *   none      nothing is awaited (the client gives up first)
 */
export type Expectation =
  { kind: 'decision' } | { kind: 'review' } | { kind: 'status'; status: number } | { kind: 'none' };

export interface FuzzCase {
  seed: number;
  index: number;
  /** The webhook path the case is sent to. */
  path: string;
  method: 'POST' | 'GET';
  description: string;
  body: Buffer;
  /** undefined sends no Content-Type header. */
  contentType: string | undefined;
  transport: Transport;
  /** The Content-Length sent with the 'declared' transport, whatever the body's own length. */
  declaredLength?: number;
  expect: Expectation;
  /** The uid the review carries, when it carries a string one. */
  uid: string | undefined;
}

export const MIB = 1024 * 1024;
/** Share of cases allowed the expensive shapes (1 MiB strings, 3,000 levels, 8 MiB bodies). */
const HEAVY_SHARE = 0.03;

/** Raw JSON text and raw bytes spliced into JSON.stringify's output. */
class Splicer {
  private readonly raws = new Map<string, string>();
  private readonly bytes = new Map<string, Buffer>();
  private next = 0;

  /** A placeholder value that becomes `text` verbatim (any JSON text, even invalid JSON). */
  raw(text: string): string {
    const token = `\u0000r${this.next++}\u0000`;
    this.raws.set(token, text);
    return token;
  }

  /** A placeholder to put inside a string: it becomes these bytes, unescaped. */
  inline(bytes: Buffer): string {
    const token = `\u0000b${this.next++}\u0000`;
    this.bytes.set(token, bytes);
    return token;
  }

  encode(value: unknown): Buffer {
    const text = JSON.stringify(value);
    if (this.raws.size === 0 && this.bytes.size === 0) return Buffer.from(text);
    const parts: Buffer[] = [];
    const pattern = /"\\u0000(r\d+)\\u0000"|\\u0000(b\d+)\\u0000/g;
    let last = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      parts.push(Buffer.from(text.slice(last, match.index)));
      if (match[1] !== undefined) {
        const raw = this.raws.get(`\u0000${match[1]}\u0000`);
        parts.push(Buffer.from(raw ?? match[0]));
      } else {
        parts.push(this.bytes.get(`\u0000${match[2] ?? ''}\u0000`) ?? Buffer.from(match[0]));
      }
      last = match.index + match[0].length;
    }
    parts.push(Buffer.from(text.slice(last)));
    return Buffer.concat(parts);
  }
}

type Path = (string | number)[];

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

function getAt(root: unknown, path: Path): unknown {
  let current = root;
  for (const key of path) {
    if (!isContainer(current)) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** Sets `path`, creating missing objects and lists on the way; false when a parent is not a container. */
function setAt(root: unknown, path: Path, value: unknown): boolean {
  let current = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (!isContainer(current)) return false;
    const holder = current as Record<string | number, unknown>;
    const key = path[i] as string | number;
    if (holder[key] === undefined || holder[key] === null)
      holder[key] = typeof path[i + 1] === 'number' ? [] : {};
    current = holder[key];
  }
  if (!isContainer(current)) return false;
  (current as Record<string | number, unknown>)[path[path.length - 1] as string | number] = value;
  return true;
}

function deleteAt(root: unknown, path: Path): boolean {
  const parent = getAt(root, path.slice(0, -1));
  const key = path[path.length - 1];
  if (!isContainer(parent) || key === undefined) return false;
  if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
  else Reflect.deleteProperty(parent, key);
  return true;
}

/** Every path under `root` (breadth-first, capped), so a mutation can land anywhere. */
function allPaths(root: unknown, prefix: Path, limit = 4000): Path[] {
  const out: Path[] = [];
  const queue: [unknown, Path][] = [[root, prefix]];
  while (queue.length > 0 && out.length < limit) {
    const [value, path] = queue.shift() as [unknown, Path];
    if (!isContainer(value)) continue;
    // Array.from, not map: a mutation may leave holes in an array, and map keeps them.
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? Array.from(value, (item, i): [number, unknown] => [i, item])
      : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = [...path, key];
      out.push(childPath);
      queue.push([child, childPath]);
    }
  }
  return out;
}

const showPath = (path: Path): string =>
  path
    .map((key, i) =>
      typeof key === 'number'
        ? `[${key}]`
        : /^[A-Za-z_][\w]*$/.test(key)
          ? `${i ? '.' : ''}${key}`
          : `[${JSON.stringify(key)}]`,
    )
    .join('');

function shown(value: string): string {
  return value.length <= 48
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, 32))}…(${value.length} chars)`;
}

/** Deeply nested JSON text: [[[…]]], {"a":{"a":…}} or both interleaved. */
function deepText(depth: number, style: number): string {
  if (style === 0) return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  if (style === 1) return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  return `${'[{"a":'.repeat(depth / 2)}1${'}]'.repeat(depth / 2)}`;
}

/** A case's generator state: its random stream, its splicer and what it did. */
class Mutator {
  readonly splice = new Splicer();
  readonly notes: string[] = [];
  constructor(
    readonly rng: Rng,
    readonly heavy: boolean,
  ) {}

  deep(): { value: string; note: string } {
    const depth = this.heavy && this.rng.chance(0.5) ? 3000 : this.rng.pick([64, 600, 600, 1000]);
    return { value: this.splice.raw(deepText(depth, this.rng.int(3))), note: `${depth} levels deep` };
  }

  longString(): { value: string; note: string } {
    const size = this.heavy && this.rng.chance(0.5) ? MIB : this.rng.pick([4096, 60 * 1024, 61_440]);
    const char = this.rng.pick(['a', 'é', '😀', '\\', '"']);
    return {
      value: char.repeat(Math.ceil(size / Buffer.byteLength(char))),
      note: `${size}-byte string of ${JSON.stringify(char)}`,
    };
  }

  hugeNumberText(): string {
    return this.rng.pick([
      '1e50000000',
      '-1e50000000',
      '1e-99999999',
      '9'.repeat(400),
      '1e308',
      '1.7976931348623157e309',
      '5e-324',
      '-0',
      '9007199254740993',
      '2147483648',
      '-2147483649',
      '4294967296',
      '0.1',
      '1E+2147483648',
      '1e2147483647',
    ]);
  }

  quantity(): { value: unknown; note: string } {
    const rng = this.rng;
    const texts = [
      '1e50000000',
      '1e-99999999',
      '-1e50000000',
      '1E+50000000',
      '1e2147483648',
      '1e+0000000000000000000000000050',
      '1.5e-50000000',
      '1e-9',
      '1e-10',
      '0.0000000001',
      `0.${'0'.repeat(rng.pick([100, 5000]))}1`,
      '9'.repeat(rng.pick([30, 400, 5000])),
      `${'9'.repeat(30)}Ei`,
      '123456789012345678901234567890m',
      '1Ei',
      '8Ei',
      '-1',
      '-0',
      '0',
      '',
      ' 1',
      '1 ',
      '.5',
      '5.',
      '+.',
      '1e',
      '1e-',
      '1ee3',
      '0x10',
      '1_000',
      'NaN',
      'Infinity',
      '1.5Gi',
      '1.5ki',
      '100m',
      '1n',
      '1.0000000001',
      '\u0661',
      // A suffix named like an Object.prototype member: no suffix at all.
      '1constructor',
      '5toString',
      '1__proto__',
    ];
    if (rng.chance(0.8)) {
      const text = rng.pick(texts);
      return { value: text, note: `quantity ${shown(text)}` };
    }
    const raw = this.hugeNumberText();
    return {
      value: this.splice.raw(raw),
      note: `number literal ${raw.length > 20 ? `${raw.slice(0, 12)}…` : raw}`,
    };
  }

  jsonText(): { value: string; note: string } {
    const rng = this.rng;
    const n = this.heavy ? 200_000 : rng.pick([1000, 20_000, 100_000]);
    const choices: [string, () => string][] = [
      ['cpu 1e50000000', () => '{"cpu":1e50000000,"memory":2}'],
      ['cpu "1e50000000"', () => '{"cpu":"1e50000000","memory":"8Gi"}'],
      ['cpu "1e-99999999"', () => '{"cpu":"1e-99999999"}'],
      ['cpu 1e-99999999', () => '{"cpu":1e-99999999}'],
      ['a 400-digit number', () => `{"cpu":${'9'.repeat(400)}}`],
      [`[ × ${n}`, () => deepText(n, 0)],
      [`{"a": × ${n}`, () => deepText(n, 1)],
      ['unterminated nesting', () => '['.repeat(n)],
      ['duplicate keys', () => '{"cpu":1.5,"cpu":"x","memory":2,"memory":{"a":1}}'],
      [`${n} list items`, () => `[${'1,'.repeat(n)}1]`],
      [
        `${Math.min(n, 20_000)} keys`,
        () => `{${Array.from({ length: Math.min(n, 20_000) }, (_, i) => `"k${i}":${i}`).join(',')}}`,
      ],
      [
        'many node strategies',
        () =>
          JSON.stringify({
            nodeStrategies: Array.from({ length: rng.pick([200, 2000]) }, (_, i) => ({
              name: `s${i}`,
              nodeSelector: { matchLabels: { pool: 'a' } },
            })),
          }),
      ],
      [
        'many namespaces',
        () => JSON.stringify(Array.from({ length: rng.pick([1000, 20_000]) }, (_, i) => `ns-${i}`)),
      ],
      [
        'many rules',
        () =>
          JSON.stringify(
            Array.from({ length: rng.pick([500, 5000]) }, (_, i) => ({
              name: `r${i}`,
              requiredLabels: Array.from({ length: 20 }, (_, j) => `l${j}`),
            })),
          ),
      ],
      ['invalid JSON', () => rng.pick(['{', '', 'nul', '{"cpu":}', '{cpu:1}', "{'cpu':1}", '[1,]'])],
      ['a JSON scalar', () => rng.pick(['null', '1', '"x"', 'true', '[]', '{}'])],
      ['a lone surrogate', () => '{"cpu":"\\ud800","\\udfff":1}'],
      ['NaN-like numbers', () => '{"cpu":NaN,"memory":Infinity}'],
      ['wrong types', () => '{"cpu":[1],"memory":{"a":null},"clusterStrategy":"x","nodeStrategies":{}}'],
    ];
    const [note, make] = rng.pick(choices);
    return { value: make(), note: `JSON text: ${note}` };
  }

  yamlText(): { value: string; note: string } {
    const rng = this.rng;
    const aliasBomb = (): string => {
      const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
      const names = 'abcdefghij';
      for (let i = 1; i < names.length; i++) {
        const prev = names[i - 1] ?? 'a';
        lines.push(`${names[i] ?? 'z'}: &${names[i] ?? 'z'} [${Array(10).fill(`*${prev}`).join(',')}]`);
      }
      lines.push('tiers:', '  gold: *j');
      return lines.join('\n');
    };
    const n = rng.pick([1000, 20_000, 100_000]);
    const choices: [string, () => string][] = [
      ['an alias bomb', aliasBomb],
      [`[ × ${n}`, () => `tiers: {gold: ${'['.repeat(n)}h100${']'.repeat(n)}}`],
      [`{ × ${n}`, () => `tiers: ${'{a: '.repeat(n)}h100${'}'.repeat(n)}`],
      [
        `indentation × ${Math.min(n, 5000)}`,
        () => Array.from({ length: Math.min(n, 5000) }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x',
      ],
      [`${n} classes`, () => `tiers:\n  gold: [${'h100, '.repeat(n)}h100]`],
      [
        `${Math.min(n, 20_000)} tiers`,
        () => `tiers:\n${Array.from({ length: Math.min(n, 20_000) }, (_, i) => `  t${i}: h100`).join('\n')}`,
      ],
      ['merge keys', () => 'base: &b {gold: h100}\ntiers:\n  <<: [*b, *b, *b]\n  silver: a100'],
      ['tags', () => 'tiers: !!map {gold: !!binary aDEwMA==, silver: !!float 1e50000000}'],
      ['a huge number', () => 'tiers: {gold: 1e50000000, silver: 9999999999999999999999999999}'],
      [`${Math.min(n, 20_000)} documents`, () => '---\ntiers: {gold: h100}\n'.repeat(Math.min(n, 20_000))],
      ['duplicate keys', () => 'tiers:\n  gold: h100\n  gold: a100\ntiers: {}'],
      ['not YAML', () => rng.pick([': x', '- [', '{', '\t\tx', '"unterminated'])],
      [
        'wrong shapes',
        () => rng.pick(['tiers: [gold]', 'tiers: h100', '[1, 2]', 'null', 'gpuResources: {a: 1}']),
      ],
      // A JavaScript object can only hold such a key as its text; the YAML library warns about it.
      [
        'a list or map as a key',
        () =>
          rng.pick([
            '? [gold, silver]\n: h100\ntiers: {gold: h100}',
            'tiers:\n  gold: h100\n  ? {x: 1}\n  : a100',
            'x: &k [a]\ntiers:\n  *k : h100',
            'tiers: {[gold]: h100}',
          ]),
      ],
    ];
    const [note, make] = rng.pick(choices);
    return { value: make(), note: `YAML text: ${note}` };
  }

  labelValue(): { value: unknown; note: string } {
    const rng = this.rng;
    if (rng.chance(0.3)) return this.longString();
    if (rng.chance(0.15)) return this.deep();
    const value = rng.pick([
      '',
      'bad value!',
      'true',
      'TRUE',
      '-',
      'a'.repeat(64),
      '\u0000',
      '\ud800',
      'ü',
      '../x',
      'koordinator-root-quota',
      'parent',
      'leaf',
      'BE',
      'LSR',
      'gold',
    ]);
    return rng.chance(0.2)
      ? { value: rng.pick([1, true, null, [], {}]), note: 'a label of the wrong type' }
      : { value, note: `label ${shown(value)}` };
  }

  name(): { value: unknown; note: string } {
    const rng = this.rng;
    if (rng.chance(0.5)) {
      const size = this.heavy && rng.chance(0.3) ? MIB : 60 * 1024;
      return { value: 'n'.repeat(size), note: `a ${size}-byte name` };
    }
    const value = rng.pick(['', 'UPPER', '-x-', 'a'.repeat(254), 'a.b.c', '../..', 'ü', '\u0000', '%2F']);
    return { value, note: `name ${shown(value)}` };
  }

  duration(): { value: unknown; note: string } {
    const value = this.rng.pick([
      '1e50000000s',
      `${'9'.repeat(1000)}h`,
      '-1s',
      '1d',
      '',
      '1h'.repeat(20_000),
      '0.000000000000000000001s',
      '9223372036854775807ns',
      '9223372036854775808ns',
      '1.5',
      'forever',
      '1constructor',
      '30s1toString',
    ]);
    return { value, note: `duration ${shown(value)}` };
  }

  int(): { value: unknown; note: string } {
    if (this.rng.chance(0.6)) {
      const raw = this.hugeNumberText();
      return {
        value: this.splice.raw(raw),
        note: `number ${raw.length > 20 ? `${raw.slice(0, 12)}…` : raw}`,
      };
    }
    const value = this.rng.pick<JsonValue>(['1', '', null, true, 1.5, -1, [], {}]);
    return { value, note: `int slot set to ${JSON.stringify(value)}` };
  }

  freeForm(): { value: unknown; note: string } {
    const rng = this.rng;
    const choice = rng.int(6);
    if (choice <= 1) return this.deep();
    if (choice === 2) {
      const count = this.heavy ? 100_000 : rng.pick([1000, 10_000]);
      return {
        value: Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])),
        note: `${count} keys`,
      };
    }
    if (choice === 3) {
      const count = this.heavy ? 200_000 : rng.pick([1000, 20_000]);
      return {
        value: Array.from({ length: count }, (_, i) => ({ name: `c${i}` })),
        note: `${count} list items`,
      };
    }
    if (choice === 4) return this.longString();
    return { value: this.splice.raw('{"a":1,"a":{"b":2},"b":[1],"b":null}'), note: 'duplicate keys' };
  }

  hot(kind: HotKind): { value: unknown; note: string } {
    switch (kind) {
      case 'quantity':
        return this.quantity();
      case 'json-text':
        return this.jsonText();
      case 'yaml-text':
        return this.yamlText();
      case 'label-value':
        return this.labelValue();
      case 'name':
        return this.name();
      case 'duration':
        return this.duration();
      case 'int':
        return this.int();
      case 'free-form':
        return this.freeForm();
    }
  }

  /** Any value at any place: wrong types, nulls, removals, extremes, bad bytes. */
  generic(root: JsonObject, path: Path): void {
    const rng = this.rng;
    const where = showPath(path);
    const current = getAt(root, path);
    const choice = rng.int(12);
    if (choice === 0) {
      deleteAt(root, path);
      this.notes.push(`removed ${where}`);
      return;
    }
    let made: { value: unknown; note: string };
    switch (choice) {
      case 1:
        made = { value: null, note: 'null' };
        break;
      case 2: {
        const value = rng.pick<JsonValue>(
          typeof current === 'string'
            ? [1, true, [], {}, [current]]
            : typeof current === 'object'
              ? ['x', 0, true, [], {}]
              : ['1', {}, [], false],
        );
        made = { value, note: `wrong type ${JSON.stringify(value)}` };
        break;
      }
      case 3:
        made = this.int();
        break;
      case 4:
        made = this.quantity();
        break;
      case 5:
        made = this.deep();
        break;
      case 6:
        made = this.longString();
        break;
      case 7: {
        if (isContainer(current) && !Array.isArray(current)) {
          // A duplicate of the first key, written before and after it: which one wins is the parser's call.
          const keys = Object.keys(current);
          const key = keys[0] ?? 'x';
          const other = rng.pick<JsonValue>([null, 'dup', 1, { a: 1 }]);
          // The placeholder key is spliced back as the quoted key itself, so the key appears twice.
          const rebuilt: Record<string, unknown> = { [this.splice.raw(JSON.stringify(key))]: other };
          for (const [k, v] of Object.entries(current)) rebuilt[k] = v;
          setAt(root, path, rebuilt);
          this.notes.push(`${where}: duplicate key ${shown(key)}`);
          return;
        }
        made = {
          value: this.splice.raw(`{"k":1,"k":${JSON.stringify(current ?? null)}}`),
          note: 'an object with duplicate keys',
        };
        break;
      }
      case 8: {
        const bytes = rng.pick([
          Buffer.from([0xff]),
          Buffer.from([0xc3, 0x28]),
          Buffer.from([0xed, 0xa0, 0x80]),
          Buffer.from([0xf4, 0x90, 0x80, 0x80]),
          Buffer.from([0xe2, 0x82]),
          Buffer.from([0xc0, 0xaf]),
        ]);
        const base = typeof current === 'string' ? current : 'value';
        made = {
          value: `${base}${this.splice.inline(bytes)}`,
          note: `invalid UTF-8 bytes ${bytes.toString('hex')}`,
        };
        break;
      }
      case 9:
        made = {
          value: rng.pick(['\ud800', 'a\udfffb', '\u0000', '\u202e', '\ufeff']),
          note: 'a lone surrogate or control character',
        };
        break;
      case 10:
        made = this.freeForm();
        break;
      default:
        made = {
          value: rng.pick<JsonValue>(['', 0, -1, 1e308, -1e308, 5e-324, false, [], {}]),
          note: 'an edge value',
        };
    }
    setAt(root, path, made.value);
    this.notes.push(`${where} = ${made.note}`);
  }

  /** Many entries where the rules loop: containers, labels, backends, metrics, owners. */
  wide(root: JsonObject): void {
    const rng = this.rng;
    const count = this.heavy ? rng.pick([5000, 20_000]) : rng.pick([200, 1000, 2000]);
    const object = root.object as JsonObject | undefined;
    if (!isContainer(object)) return;
    const candidates: [Path, (i: number) => JsonValue][] = [
      [
        ['spec', 'containers'],
        (i) => ({
          name: `c${i}`,
          resources: { requests: { cpu: '1m', 'koordinator.sh/gpu': '100' }, limits: { cpu: '1m' } },
        }),
      ],
      [['spec', 'initContainers'], (i) => ({ name: `i${i}`, resources: { requests: { memory: '1Mi' } } })],
      [
        ['spec', 'backends'],
        (i) => ({ name: `b${i}`, minReplicas: 1, maxReplicas: 1, workers: [{ type: 'server', image: 'x' }] }),
      ],
      [['spec', 'metrics'], (i) => ({ metricName: `m${i}`, targetValue: '1' })],
      [['spec', 'owners'], (i) => ({ object: { name: `p${i}` } })],
      [['spec', 'template', 'spec', 'containers'], (i) => ({ name: `c${i}` })],
      [['spec', 'optimizerConfiguration', 'params'], (i) => ({ cost: i, minReplicas: 1, maxReplicas: 2 })],
    ];
    const maps: Path[] = [
      ['metadata', 'labels'],
      ['metadata', 'annotations'],
      ['spec', 'max'],
      ['spec', 'min'],
      ['status', 'allocatable'],
      ['data'],
      ['spec', 'nodeSelector'],
    ];
    if (rng.chance(0.5)) {
      const present = candidates.filter(([path]) => Array.isArray(getAt(object, path)));
      if (present.length > 0) {
        const [path, make] = rng.pick(present);
        setAt(
          object,
          path,
          Array.from({ length: count }, (_, i) => make(i)),
        );
        this.notes.push(`object.${showPath(path)}: ${count} entries`);
        return;
      }
    }
    const path = rng.pick(maps);
    const existing = getAt(object, path);
    const extra = Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`example.com/k${i}`, rng.pick(['1', '1Gi', `v${i}`])]),
    );
    const named = rng.chance(0.3) ? rng.pick(PROTOTYPE_KEYS) : undefined;
    if (named !== undefined) putOwn(extra, named, rng.pick(['1', '1Gi', 'v']));
    setAt(object, path, { ...(isContainer(existing) && !Array.isArray(existing) ? existing : {}), ...extra });
    this.notes.push(
      `object.${showPath(path)}: ${count} more entries${named === undefined ? '' : `, one named ${JSON.stringify(named)}`}`,
    );
  }
}

const REQUIRED: Path[] = [
  ['object', 'metadata', 'name'],
  ['object', 'metadata', 'namespace'],
  ['object', 'spec'],
  ['object', 'spec', 'containers'],
  ['object', 'kind'],
  ['object', 'apiVersion'],
  ['object', 'metadata', 'labels'],
  ['object', 'status'],
  ['object', 'data'],
  ['oldObject'],
  ['oldObject', 'metadata', 'labels'],
  ['name'],
  ['namespace'],
  ['subResource'],
  ['userInfo'],
];

function envelope(kind: string, request: JsonObject, uid: string): JsonObject {
  return { apiVersion: 'admission.k8s.io/v1', kind, request: { uid, ...request } };
}

type Built = Omit<FuzzCase, 'seed' | 'index'>;

function mutatedCase(rng: Rng, seed: Seed, uid: string, heavy: boolean): Built {
  const m = new Mutator(rng, heavy);
  let request = structuredClone(seed.request);
  const rounds = rng.chance(0.6) ? 1 : rng.chance(0.6) ? 2 : rng.range(3, 4);
  for (let round = 0; round < rounds; round++) {
    const roll = rng.next();
    if (roll < 0.45 && seed.hot.length > 0) {
      const spot = rng.pick(seed.hot);
      const made = m.hot(spot.kind);
      if (setAt(request, spot.at, made.value)) m.notes.push(`${showPath(spot.at)} = ${made.note}`);
    } else if (roll < 0.76) {
      const scope = rng.next();
      const paths =
        scope < 0.7
          ? allPaths(request.object, ['object'])
          : scope < 0.85 && request.oldObject
            ? allPaths(request.oldObject, ['oldObject'])
            : Object.keys(request)
                .filter((key) => key !== 'object' && key !== 'oldObject')
                .flatMap((key) => [[key], ...allPaths(request[key], [key])]);
      if (paths.length > 0) m.generic(request, rng.pick(paths));
    } else if (roll < 0.82) {
      // A key a user chose that a plain object already answers for: in Go only a key.
      const drawn = withDrawnKey(rng, request);
      if (drawn) {
        request = drawn.request;
        m.notes.push(drawn.note);
      }
    } else if (roll < 0.92) {
      m.wide(request);
    } else {
      const path = rng.pick(REQUIRED);
      if (deleteAt(request, path)) m.notes.push(`removed ${showPath(path)}`);
    }
  }
  return {
    path: seed.path,
    method: 'POST',
    description: `${seed.label}; ${m.notes.join('; ') || 'unchanged'}`,
    body: m.splice.encode(envelope('AdmissionReview', request, uid)),
    contentType: 'application/json',
    transport: 'plain',
    expect: { kind: 'review' },
    uid,
  };
}

/** Envelopes the API server never sends: each must get a 400 naming the problem. */
function malformedCase(rng: Rng, seed: Seed, uid: string, heavy: boolean): Built {
  const m = new Mutator(rng, heavy);
  const valid = envelope('AdmissionReview', seed.request, uid);
  const validText = JSON.stringify(valid);
  const depth = heavy ? rng.pick([3000, 100_000]) : rng.pick([600, 3000, 100_000]);
  const variants: [string, () => unknown][] = [
    ['not JSON', () => m.splice.raw(rng.pick(['{', 'garbage', '', '\u0000', 'nul', '{"apiVersion":']))],
    ['truncated JSON', () => m.splice.raw(validText.slice(0, rng.int(validText.length)))],
    ['a byte-order mark before the JSON', () => m.splice.raw(`\ufeff${validText}`)],
    ['a JSON scalar or list', () => rng.pick<JsonValue>([null, [], 'review', 42, [valid]])],
    ['apiVersion v1beta1', () => ({ ...valid, apiVersion: 'admission.k8s.io/v1beta1' })],
    ['no apiVersion', () => ({ kind: 'AdmissionReview', request: valid.request })],
    [
      `apiVersion nested ${depth} deep`,
      () => ({ ...valid, apiVersion: m.splice.raw(deepText(depth, rng.int(3))) }),
    ],
    [`kind nested ${depth} deep`, () => ({ ...valid, kind: m.splice.raw(deepText(depth, rng.int(3))) })],
    ['apiVersion a 1 MiB string', () => ({ ...valid, apiVersion: 'v'.repeat(heavy ? MIB : 60 * 1024) })],
    ['wrong kind', () => ({ ...valid, kind: rng.pick<JsonValue>(['AdmissionRequest', '', 1, null]) })],
    ['no request', () => ({ apiVersion: valid.apiVersion, kind: valid.kind })],
    ['request not an object', () => ({ ...valid, request: rng.pick<JsonValue>([null, [], 'x', 1]) })],
    [
      'uid of a wrong type',
      () => ({
        ...valid,
        request: { ...seed.request, uid: rng.pick<JsonValue>([1, null, '', [], { a: 1 }, true]) },
      }),
    ],
    [
      `uid nested ${depth} deep`,
      () => ({ ...valid, request: { ...seed.request, uid: m.splice.raw(deepText(depth, 0)) } }),
    ],
    ['no uid', () => ({ ...valid, request: { ...seed.request } })],
    [
      'operation invalid',
      () => ({
        ...valid,
        request: { uid, ...seed.request, operation: rng.pick<JsonValue>(['create', 'PATCH', 1, null, '']) },
      }),
    ],
    [
      `operation nested ${depth} deep`,
      () => ({ ...valid, request: { uid, ...seed.request, operation: m.splice.raw(deepText(depth, 1)) } }),
    ],
    ['no kind in the request', () => ({ ...valid, request: { uid, ...seed.request, kind: null } })],
    [
      'kind.kind of a wrong type',
      () => ({ ...valid, request: { uid, ...seed.request, kind: { group: '', version: 'v1', kind: 7 } } }),
    ],
    ['no resource', () => ({ ...valid, request: { uid, ...seed.request, resource: 'pods' } })],
    [
      'object a string',
      () => ({ ...valid, request: { uid, ...seed.request, operation: 'CREATE', object: 'pod' } }),
    ],
    [
      'object without metadata',
      () => ({ ...valid, request: { uid, ...seed.request, operation: 'CREATE', object: { kind: 'Pod' } } }),
    ],
    [
      'metadata a list',
      () => ({ ...valid, request: { uid, ...seed.request, operation: 'CREATE', object: { metadata: [] } } }),
    ],
    [
      'UPDATE without oldObject',
      () => ({ ...valid, request: { uid, ...seed.request, operation: 'UPDATE', oldObject: null } }),
    ],
    [
      'namespace of a wrong type',
      () => ({ ...valid, request: { uid, ...seed.request, namespace: { a: 1 } } }),
    ],
  ];
  const [note, make] = rng.pick(variants);
  return {
    path: seed.path,
    method: 'POST',
    description: `malformed envelope (${seed.label}): ${note}`,
    body: m.splice.encode(make()),
    contentType: 'application/json',
    transport: 'plain',
    expect: { kind: 'status', status: 400 },
    uid: undefined,
  };
}

function transportCase(rng: Rng, seed: Seed, uid: string): Built {
  const body = Buffer.from(JSON.stringify(envelope('AdmissionReview', seed.request, uid)));
  const base: Built = {
    path: seed.path,
    method: 'POST',
    description: '',
    body,
    contentType: 'application/json',
    transport: 'plain',
    expect: { kind: 'decision' },
    uid,
  };
  const roll = rng.next();
  if (roll < 0.4) return { ...base, transport: 'chunked', description: `${seed.label}, sent chunked` };
  if (roll < 0.6) {
    const contentType = rng.pick([
      undefined,
      'text/plain',
      'application/yaml',
      'application/jsonx',
      'application/x-www-form-urlencoded',
      'json',
    ]);
    return {
      ...base,
      contentType,
      expect: { kind: 'status', status: 415 },
      description: `${seed.label}, Content-Type ${JSON.stringify(contentType ?? null)}`,
    };
  }
  if (roll < 0.7) {
    const contentType = rng.pick([
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json ;charset=UTF-8',
    ]);
    return {
      ...base,
      contentType,
      description: `${seed.label}, Content-Type ${JSON.stringify(contentType)}`,
    };
  }
  if (roll < 0.78) {
    const method = 'GET';
    return {
      ...base,
      method,
      body: Buffer.alloc(0),
      expect: { kind: 'status', status: 405 },
      description: `GET ${seed.path}`,
    };
  }
  if (roll < 0.84) {
    return {
      ...base,
      path: `${seed.path}/x`,
      expect: { kind: 'status', status: 404 },
      description: `${seed.label}, sent to ${seed.path}/x`,
    };
  }
  if (roll < 0.9) {
    const complete = rng.chance(0.5);
    return {
      ...base,
      transport: complete ? 'slow-complete' : 'slow-stall',
      expect: complete ? { kind: 'decision' } : { kind: 'none' },
      description: `${seed.label}, dribbled over ~1.5 s${complete ? '' : ' and never finished'}`,
    };
  }
  // Oversized: a valid envelope padded past the 3 MiB limit.
  const pad = Buffer.alloc(8 * MIB, 0x61);
  const prefix = Buffer.from(
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":${JSON.stringify(uid)},"pad":"`,
  );
  const chunked = rng.chance(0.5);
  return {
    ...base,
    body: Buffer.concat([prefix, pad, Buffer.from('"}}')]),
    transport: chunked ? 'chunked' : 'plain',
    expect: { kind: 'status', status: 413 },
    description: `${seed.label}, an 8 MiB body${chunked ? ' sent chunked (no Content-Length)' : ''}`,
  };
}

/** A Content-Length no server should wait for. */
const TIB = 1024 * MIB * 1024;
/** Just past the server's 7 MiB limit. */
const JUST_OVER_LIMIT = 7 * MIB + 10;

/**
 * Calls that end early: a body declared past the limit (answered 413 from the headers, before
 * the body is sent), or a caller that hangs up (nothing to answer; never a server error).
 */
function earlyEndCase(rng: Rng, seed: Seed, uid: string): Built {
  const base: Built = {
    path: seed.path,
    method: 'POST',
    description: '',
    body: Buffer.from(JSON.stringify(envelope('AdmissionReview', seed.request, uid))),
    contentType: 'application/json',
    transport: 'declared',
    expect: { kind: 'status', status: 413 },
    uid,
  };
  const roll = rng.next();
  if (roll < 0.3) {
    return {
      ...base,
      declaredLength: TIB,
      description: `${seed.label}, 1 TiB declared and only the review (${base.body.length} bytes) sent`,
    };
  }
  if (roll < 0.5) {
    return {
      ...base,
      body: Buffer.alloc(0),
      declaredLength: JUST_OVER_LIMIT,
      description: `${seed.label}, 7 MiB + 10 bytes declared and nothing sent`,
    };
  }
  const midBody = roll < 0.8;
  return {
    ...base,
    transport: midBody ? 'abort-mid-body' : 'abort-after-body',
    expect: { kind: 'none' },
    description: `${seed.label}, the caller hangs up ${midBody ? 'halfway through the body' : 'once the body is sent'}`,
  };
}

/** Paths of the webhook table, in seed order: a case picks its path first, so every path gets its share. */
export function fuzzPaths(): string[] {
  return [...new Set(seeds().map((seed) => seed.path))];
}

export function generateCase(seed: number, index: number): FuzzCase {
  const rng = mulberry32(caseSeed(seed, index));
  const paths = fuzzPaths();
  const path = rng.pick(paths);
  const own = seeds().filter((candidate) => candidate.path === path);
  const base = rng.pick(own);
  const uid = `fuzz-${seed}-${index}`;
  const heavy = rng.chance(HEAVY_SHARE);
  const roll = rng.next();
  let built: Built;
  if (roll < 0.04) {
    built = {
      path,
      method: 'POST',
      description: `${base.label}, unchanged`,
      body: Buffer.from(JSON.stringify(envelope('AdmissionReview', base.request, uid))),
      contentType: 'application/json',
      transport: 'plain',
      expect: { kind: 'decision' },
      uid,
    };
  } else if (roll < 0.06) {
    // A review of another kind: the API server never sends one, but the rule must not trip on it.
    const other = rng.pick(seeds());
    built = {
      ...mutatedCase(rng, { ...other, path }, uid, heavy),
    };
    built.description = `(a ${other.path} review sent to ${path}) ${built.description}`;
  } else if (roll < 0.11) {
    built = malformedCase(rng, base, uid, heavy);
  } else if (roll < 0.15) {
    built = transportCase(rng, base, uid);
  } else if (roll < 0.17) {
    built = earlyEndCase(rng, base, uid);
  } else {
    built = mutatedCase(rng, base, uid, heavy);
  }
  return { seed, index, ...built };
}
