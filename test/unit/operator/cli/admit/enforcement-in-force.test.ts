/** Reading the operator's --enforcement from its Deployment's container, as the operator reads its own flags. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enforcementOfContainer } from '../../../../../operator/cli/admit/enforcement-in-force.js';

describe('enforcementOfContainer', () => {
  it('takes the flag from args or command, in either form, else the environment twin', () => {
    assert.equal(
      enforcementOfContainer({ name: 'a', args: ['--enforcement=validate-pod=warn,'] }),
      'validate-pod=warn,',
    );
    assert.equal(
      enforcementOfContainer({ name: 'a', command: ['node', 'main.mjs', '--enforcement', '*=dryrun'] }),
      '*=dryrun',
    );
    assert.equal(
      enforcementOfContainer({
        name: 'a',
        args: ['--enforcement=*=warn'],
        env: [{ name: 'ADMISSION_ENFORCEMENT', value: '*=dryrun' }],
      }),
      '*=warn',
      'a flag wins over its environment twin',
    );
    assert.equal(
      enforcementOfContainer({ name: 'a', env: [{ name: 'ADMISSION_ENFORCEMENT', value: '*=dryrun' }] }),
      '*=dryrun',
    );
    assert.equal(enforcementOfContainer({ name: 'a', args: ['--namespace=x'] }), undefined);
  });
});
