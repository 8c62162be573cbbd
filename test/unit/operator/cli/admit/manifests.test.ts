import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { describe, it } from 'node:test';
import { InputError, loadManifests, type Manifest } from '../../../../../operator/cli/admit/manifests.js';
import { temporaryDirectory } from '../../../../harness/temp-dir.js';

const noStdin = (): Promise<string> => Promise.resolve('');
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` saved as the file `name` in a fresh directory, and that directory as messages name it. */
async function saved(text: string, name: string): Promise<{ path: string; dir: string }> {
  const dir = await temporaryDirectory('admit-');
  const path = join(dir, name);
  await writeFile(path, text);
  return { path, dir: escaped(`${dir}${sep}`) };
}

/** Loads `text` from the file `name`, as `admit -f` does. */
async function load(text: string, name: string): Promise<Manifest[]> {
  return loadManifests([(await saved(text, name)).path], noStdin);
}

/** Loading `text` from the file `name` fails with a message matching `expected` after the directory. */
async function refuses(text: string, name: string, expected: RegExp, anchored = false): Promise<void> {
  const { path, dir } = await saved(text, name);
  await assert.rejects(loadManifests([path], noStdin), (error: Error) => {
    assert.ok(error instanceof InputError, String(error));
    assert.match(error.message, new RegExp(`${anchored ? '^' : ''}${dir}${expected.source}`));
    return true;
  });
}

describe('manifest loading', () => {
  it('reads multi-document YAML, JSON and Lists, skipping empty documents', async () => {
    const text = [
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}',
      '',
      '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}]}',
    ].join('\n---\n');
    const manifests = await load(text, 'in.yaml');
    assert.deepEqual(
      manifests.map((m) => [m.object.metadata.name, m.document, m.item]),
      [
        ['a', 0, undefined],
        ['b', 2, 0],
        ['c', 2, 1],
      ],
    );
  });

  it('names the file, document and line of YAML that does not parse', async () => {
    await refuses(
      'apiVersion: v1\nkind: Pod\n---\nkind: [\n',
      'bad.yaml',
      /bad\.yaml#1: not valid YAML: .*\(line \d+\)$/,
      true,
    );
  });

  it('names a document that is not a Kubernetes object', async () => {
    await refuses('- a\n- b\n', 'list.yaml', /list\.yaml#0: not a Kubernetes object/, true);
    await refuses(
      'apiVersion: v1\nmetadata: {name: x}\n',
      'nokind.yaml',
      /nokind\.yaml#0: kind: Required value/,
    );
    await refuses(
      'kind: List\napiVersion: v1\nitems: [{kind: Pod}]\n',
      'items.yaml',
      /items\.yaml#0\.items\[0\]: apiVersion: Required value/,
    );
  });

  it('refuses YAML nested too deep for the parser before parsing it', async () => {
    await refuses(`a: ${'['.repeat(5000)}`, 'deep.yaml', /deep\.yaml: nested deeper than/);
  });

  it('walks directories in name order, reads stdin for -, and names a missing path', async () => {
    const root = await temporaryDirectory('admit-');
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'b.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n');
    await writeFile(
      join(root, 'sub', 'a.json'),
      '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}',
    );
    await writeFile(join(root, 'notes.txt'), 'not a manifest');
    const manifests = await loadManifests([root, '-'], () =>
      Promise.resolve('apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n'),
    );
    assert.deepEqual(
      manifests.map((m) => m.object.metadata.name),
      ['b', 'a', 's'],
    );
    await assert.rejects(
      loadManifests([join(root, 'missing.yaml')], () => Promise.resolve('')),
      /missing\.yaml: cannot be read: ENOENT/,
    );
  });
});
