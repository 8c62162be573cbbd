/**
 * The import graph of a folder, drawn from its sources rather than from a bundler: every
 * `import ... from '...'`, `export ... from '...'` and bare `import '...'` line, type-only ones
 * included, since a type taken from a file above makes the same circle a reader has to follow,
 * and every `import('...')`, a dependency all the same.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A file's relative imports, as repository paths of the `.ts` files they name. */
export interface ImportEdge {
  file: string;
  target: string;
}

/** Files (repository paths) and the files each imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

// A statement starts a line; `[^'";]` lets its braces span lines but not run into the next statement.
const IMPORT = /^(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'|^import\s*'([^']+)'|\bimport\(\s*'([^']+)'/gm;

/** The specifiers of a source's imports and re-exports, in order. */
export function importSpecifiers(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
}

function tsFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** The relative imports of every `.ts` file under `dir`; a `.js` specifier names its `.ts` source. */
export function importsUnder(root: string, dir: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of tsFiles(root, dir)) {
    for (const specifier of importSpecifiers(readFileSync(join(root, file), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, '.ts');
      edges.push({ file, target });
    }
  }
  return edges;
}

/** The graph of the files under `dir`, keeping only the imports that stay inside it. */
export function importGraph(root: string, dir: string): ImportGraph {
  const graph = new Map<string, string[]>(tsFiles(root, dir).map((file) => [file, []]));
  for (const { file, target } of importsUnder(root, dir)) {
    if (graph.has(target)) graph.get(file)?.push(target);
  }
  return graph;
}

/**
 * Every circle: each set of files that reach one another (Tarjan's strongly connected
 * components), a file importing itself included, its files sorted, largest set first.
 */
export function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.size - 1);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const members: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      members.push(member);
      if (member === file) break;
    }
    if (members.length > 1 || graph.get(file)?.includes(file)) circles.push(members.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles.sort((a, b) => b.length - a.length);
}

/** The shortest way round a circle from its first file back to it, naming each file once: `a -> b -> a`. */
export function circlePath(graph: ImportGraph, circle: readonly string[]): string {
  const start = circle[0] ?? '';
  const inside = new Set(circle);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    for (const target of graph.get(at) ?? []) {
      if (!inside.has(target) || cameFrom.has(target)) continue;
      cameFrom.set(target, at);
      if (target === start) queue.length = 0;
      else queue.push(target);
    }
  }
  const path: string[] = [];
  for (let at = cameFrom.get(start); at !== undefined && at !== start; at = cameFrom.get(at))
    path.unshift(at);
  return [start, ...path, start].join(' -> ');
}
