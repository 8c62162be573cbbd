/**
 * Reads manifests as `kubectl apply -f` does: files, directories (recursively, .yaml/.yml/.json
 * files in name order) and `-` for standard input; multi-document YAML or JSON; a `List` (or any
 * `*List` kind with items) stands for its items. Every problem is an InputError naming the file and
 * the document, so a CI log points at the line to fix.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../webhook/admission/types.js';
import { yamlNestingDepth } from '../../../webhook/rules/kubenexus/tier-mapping.js';
import { MAX_SHOWN_VALUE_CHARS, truncate } from '../../../webhook/util/bounded-text.js';

/** A manifest file (or standard input) that cannot be read as Kubernetes objects. */
export class InputError extends Error {
  override name = 'InputError';
}

/** One object of the input and where it came from. */
export interface Manifest {
  object: KubeObject;
  /** The file (or `-`). */
  source: string;
  /** The document's index in its file, from 0; `item` when it came from a List. */
  document: number;
  item?: number;
}

/** Far deeper than any manifest; beyond it the YAML parser's recursion is the risk. */
const MAX_YAML_DEPTH = 256;
/** A manifest uses anchors sparingly; a "billion laughs" needs millions of expansions. */
const MAX_ALIAS_COUNT = 1000;
const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/** `file#2` or `file#2.items[3]`: where a manifest sits, as messages name it. */
export function whereOf(manifest: Pick<Manifest, 'source' | 'document' | 'item'>): string {
  return `${manifest.source}#${manifest.document}${manifest.item === undefined ? '' : `.items[${manifest.item}]`}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why `value` is not a Kubernetes object, or undefined when it is one. */
function objectProblem(value: Record<string, unknown>): string | undefined {
  for (const key of ['apiVersion', 'kind'] as const) {
    const field = value[key];
    if (typeof field !== 'string' || field === '')
      return `${key}: Required value: must be a non-empty string`;
  }
  if (value.metadata !== undefined && !isObject(value.metadata)) return 'metadata: must be a map';
  return undefined;
}

function toManifest(
  value: unknown,
  place: Pick<Manifest, 'source' | 'document' | 'item'>,
): Manifest | InputError {
  if (!isObject(value)) return new InputError(`${whereOf(place)}: not a Kubernetes object (a YAML map)`);
  const problem = objectProblem(value);
  if (problem) return new InputError(`${whereOf(place)}: ${problem}`);
  const object = { ...value, metadata: isObject(value.metadata) ? value.metadata : {} } as KubeObject;
  return { object, ...place };
}

/** The objects of one YAML or JSON text. */
function parseManifests(text: string, source: string): Manifest[] {
  // JSON (such as this command's own -o json) is read by V8's parser, many times faster than YAML's.
  if (/^\s*[{[]/.test(text)) {
    try {
      return fromValues([JSON.parse(text) as unknown], source);
    } catch (error) {
      if (error instanceof InputError) throw error;
      // Not JSON after all (YAML flow style): the YAML parser reads it below.
    }
  }
  if (yamlNestingDepth(text) > MAX_YAML_DEPTH) {
    throw new InputError(`${source}: nested deeper than ${MAX_YAML_DEPTH} levels; not read`);
  }
  const values: unknown[] = [];
  const documents = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true });
  if (!Array.isArray(documents)) return [];
  for (const [index, document] of documents.entries()) {
    const error = document.errors[0];
    if (error) {
      throw new InputError(
        `${source}#${index}: not valid YAML: ${truncate(error.message, 256)} (line ${text.slice(0, error.pos[0]).split('\n').length})`,
      );
    }
    try {
      values.push(document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }));
    } catch (cause) {
      throw new InputError(`${source}#${index}: not readable: ${truncate((cause as Error).message, 256)}`);
    }
  }
  return fromValues(values, source);
}

/** The objects of a file's documents, in order. */
function fromValues(values: readonly unknown[], source: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const [index, value] of values.entries()) {
    // An empty document (a stray `---`) holds nothing, as kubectl treats it.
    if (value === null || value === undefined) continue;
    const place = { source, document: index };
    if (
      isObject(value) &&
      typeof value.kind === 'string' &&
      value.kind.endsWith('List') &&
      Array.isArray(value.items)
    ) {
      for (const [item, entry] of value.items.entries()) {
        const manifest = toManifest(entry, { ...place, item });
        if (manifest instanceof InputError) throw manifest;
        manifests.push(manifest);
      }
      continue;
    }
    const manifest = toManifest(value, place);
    if (manifest instanceof InputError) throw manifest;
    manifests.push(manifest);
  }
  return manifests;
}

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.some((ext) => entry.name.endsWith(ext)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Reads every path in order; `readStdin` is called for `-` (at most once). */
export async function loadManifests(
  paths: readonly string[],
  readStdin: () => Promise<string>,
): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  let stdinRead = false;
  for (const path of paths) {
    if (path === '-') {
      if (stdinRead) throw new InputError('-: standard input can be read only once');
      stdinRead = true;
      manifests.push(...parseManifests(await readStdin(), '-'));
      continue;
    }
    let files: string[];
    try {
      files = (await stat(path)).isDirectory() ? await filesUnder(path) : [path];
    } catch (cause) {
      throw new InputError(
        `${truncate(path, MAX_SHOWN_VALUE_CHARS * 4)}: cannot be read: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`,
      );
    }
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (cause) {
        throw new InputError(
          `${file}: cannot be read: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`,
        );
      }
      manifests.push(...parseManifests(text, file));
    }
  }
  return manifests;
}

/** A manifest's apiVersion (checked to be a string when it was read). */
export const apiVersionOf = (object: KubeObject): string =>
  typeof object.apiVersion === 'string' ? object.apiVersion : '';

/** A manifest's kind (checked to be a string when it was read). */
export const kindOf = (object: KubeObject): string => (typeof object.kind === 'string' ? object.kind : '');
