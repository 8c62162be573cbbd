import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { own, putOwn } from '../../../../webhook/util/own.js';
import { PROTOTYPE_KEYS } from '../../../fuzz/prototype-keys.js';

describe('own-property access to maps keyed by users', () => {
  it('reads only what the map holds, whatever the key is named', () => {
    const map = JSON.parse('{"cpu":"1","constructor":"2","__proto__":"3"}') as Record<string, string>;
    assert.equal(own(map, 'cpu'), '1');
    assert.equal(own(map, 'constructor'), '2');
    assert.equal(own(map, '__proto__'), '3');
    for (const key of PROTOTYPE_KEYS.filter((name) => name !== 'constructor' && name !== '__proto__'))
      assert.equal(own(map, key), undefined, key);
    assert.equal(own(undefined, 'cpu'), undefined);
  });

  it('writes every name as an entry, __proto__ included, leaving the prototype alone', () => {
    const map: Record<string, string> = {};
    for (const key of PROTOTYPE_KEYS) putOwn(map, key, key.toUpperCase());
    assert.equal(Object.getPrototypeOf(map), Object.prototype);
    assert.deepEqual(Object.keys(map), [...PROTOTYPE_KEYS]);
    assert.equal(
      JSON.stringify(map),
      JSON.stringify(Object.fromEntries(PROTOTYPE_KEYS.map((key) => [key, key.toUpperCase()]))),
    );
    putOwn(map, '__proto__', 'again');
    assert.equal(own(map, '__proto__'), 'again');
  });
});
