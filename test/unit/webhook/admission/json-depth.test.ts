import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pruneDeepJson, pruneJson } from '../../../../webhook/admission/json-depth.js';

const prune = (text: string, maxDepth: number): { text: string; pruned: number } => {
  const result = pruneDeepJson(Buffer.from(text), maxDepth);
  return { text: result.body.toString(), pruned: result.pruned };
};

describe('pruneDeepJson', () => {
  it('leaves JSON within the bound untouched', () => {
    const text = JSON.stringify({ a: [1, { b: [2, 3] }], c: 'x' });
    assert.deepEqual(prune(text, 4), { text, pruned: 0 });
  });

  it('replaces each container that starts deeper than the bound with null', () => {
    const text = JSON.stringify({ a: [[[1]], [[2]]], b: { c: { d: {} } } });
    const result = prune(text, 3);
    assert.equal(result.pruned, 3);
    assert.deepEqual(JSON.parse(result.text), { a: [[null], [null]], b: { c: { d: null } } });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '[[[[{{{{"\\"[[[[', b: ['\\', '"]]]'] });
    const result = prune(text, 2);
    assert.equal(result.pruned, 0);
    assert.deepEqual(JSON.parse(result.text), JSON.parse(text));
  });

  it('keeps multi-byte UTF-8 text intact around a pruned part', () => {
    const text = `{"ü":"€😀","deep":${'['.repeat(10)}${']'.repeat(10)},"z":"ß"}`;
    const result = prune(text, 3);
    assert.deepEqual(JSON.parse(result.text), { ü: '€😀', deep: [[null]], z: 'ß' });
  });

  it('turns a million levels into a small document', () => {
    const depth = 1_000_000;
    const text = `{"request":{"object":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const result = prune(text, 514);
    assert.equal(result.pruned, 1);
    assert.equal(result.text.length < 2000, true);
    assert.doesNotThrow(() => JSON.parse(result.text));
  });

  it('leaves malformed JSON malformed', () => {
    const unterminated = `{"a":${'['.repeat(600)}`;
    assert.throws(() => JSON.parse(prune(unterminated, 10).text));
    const openString = `{"a":${'['.repeat(600)}"abc`;
    assert.throws(() => JSON.parse(prune(openString, 10).text));
  });

  it('replaces a map or list with more members than the bound, and says which bound', () => {
    const wide = JSON.stringify({
      keep: [1, 2, 3],
      map: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])),
      list: Array.from({ length: 20 }, (_, i) => i),
      text: 'a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v',
    });
    const result = pruneJson(Buffer.from(wide), { maxDepth: 10, maxMembers: 10 });
    assert.equal(result.exceeded, 'members');
    assert.deepEqual(JSON.parse(result.body.toString()), {
      keep: [1, 2, 3],
      map: null,
      list: null,
      text: 'a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v',
    });
  });

  it('accepts exactly the bound of members', () => {
    const text = JSON.stringify({ list: Array.from({ length: 9 }, (_, i) => i) });
    assert.equal(pruneJson(Buffer.from(text), { maxDepth: 10, maxMembers: 10 }).pruned, 0);
  });
});
