import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InputError, loadManifests, parseManifests } from '../../../../../operator/cli/admit/manifests.js';

describe('manifest loading', () => {
  it('reads multi-document YAML, JSON and Lists, skipping empty documents', () => {
    const text = [
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}',
      '',
      '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}]}',
    ].join('\n---\n');
    const manifests = parseManifests(text, 'in.yaml');
    assert.deepEqual(
      manifests.map((m) => [m.object.metadata.name, m.document, m.item]),
      [
        ['a', 0, undefined],
        ['b', 2, 0],
        ['c', 2, 1],
      ],
    );
  });

  it('names the file, document and line of YAML that does not parse', () => {
    assert.throws(
      () => parseManifests('apiVersion: v1\nkind: Pod\n---\nkind: [\n', 'bad.yaml'),
      (error: Error) =>
        error instanceof InputError && /^bad\.yaml#1: not valid YAML: .*\(line \d+\)$/.test(error.message),
    );
  });

  it('names a document that is not a Kubernetes object', () => {
    assert.throws(
      () => parseManifests('- a\n- b\n', 'list.yaml'),
      /^InputError: list\.yaml#0: not a Kubernetes object/,
    );
    assert.throws(
      () => parseManifests('apiVersion: v1\nmetadata: {name: x}\n', 'nokind.yaml'),
      /nokind\.yaml#0: kind: Required value/,
    );
    assert.throws(
      () => parseManifests('kind: List\napiVersion: v1\nitems: [{kind: Pod}]\n', 'items.yaml'),
      /items\.yaml#0\.items\[0\]: apiVersion: Required value/,
    );
  });

  it('refuses YAML nested too deep for the parser before parsing it', () => {
    assert.throws(
      () => parseManifests(`a: ${'['.repeat(5000)}`, 'deep.yaml'),
      /deep\.yaml: nested deeper than/,
    );
  });

  it('walks directories in name order, reads stdin for -, and names a missing path', async () => {
    const root = await mkdtemp(join(tmpdir(), 'admit-'));
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
