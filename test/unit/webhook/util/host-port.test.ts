import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinHostPort, splitHostPort } from '../../../../webhook/util/host-port.js';

describe('host:port addresses', () => {
  it('splits names, IPv4 and bracketed IPv6 hosts, and joins them back the same way', () => {
    for (const [address, host, port] of [
      ['10.0.0.7:9443', '10.0.0.7', 9443],
      ['webhook.admission-system.svc:443', 'webhook.admission-system.svc', 443],
      ['[fd00::7]:9443', 'fd00::7', 9443],
    ] as const) {
      assert.deepEqual(splitHostPort(address), { host, port });
      assert.equal(joinHostPort(host, port), address);
    }
  });

  it('refuses what is not host:port with a port in 1-65535', () => {
    for (const address of [
      '10.0.0.7',
      ':9443',
      '10.0.0.7:0',
      '10.0.0.7:65536',
      'fd00::7:9443',
      'a b:1',
      '[x]:1',
    ]) {
      assert.equal(splitHostPort(address), undefined, address);
    }
  });
});
