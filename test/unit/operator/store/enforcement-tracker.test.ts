import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { EnforcementTracker } from '../../../../operator/store/enforcement-tracker.js';
import { actionFor, readEnforcement, type Enforcement } from '../../../../webhook/enforcement/enforcement.js';
import { FieldPath } from '../../../../webhook/rules/shared/field-errors.js';
import { operatorMetrics } from '../../../../operator/metrics/operator-metrics.js';
import type { ConfigMapView } from '../../../../webhook/state.js';

const names = ['validate-pod', 'mutate-pod'];

function fromFlag(text: string): Enforcement {
  const parsed = readEnforcement(text, names, FieldPath.of('--enforcement'));
  assert.ok(parsed.ok);
  return parsed.value;
}

function tracker(flag: string) {
  const metrics = operatorMetrics();
  const events: { reason: string; message: string }[] = [];
  const tracked = new EnforcementTracker(fromFlag(flag), names, pino({ level: 'silent' }), metrics, {
    warning: (_target, reason, message) => {
      events.push({ reason, message });
      return Promise.resolve();
    },
  });
  return { tracked, metrics, events };
}

const configMap = (resourceVersion: string, data: Record<string, string>): ConfigMapView => ({
  namespace: 'admission-system',
  name: 'admission-operator',
  uid: 'u1',
  resourceVersion,
  data,
});

describe('EnforcementTracker', () => {
  it('starts from the flag and publishes it as a gauge', async () => {
    const { tracked, metrics } = tracker('validate-pod=warn');
    assert.equal(actionFor(tracked.enforcement, 'validate-pod'), 'warn');
    const text = await metrics.registry.metrics();
    assert.match(text, /admission_webhook_enforcement\{webhook="validate-pod",action="warn"\} 1/);
    assert.match(text, /admission_webhook_enforcement\{webhook="validate-pod",action="deny"\} 0/);
  });

  it('takes a valid ConfigMap, keeps the last good one over an invalid one, and returns to the flag without the key', async () => {
    const { tracked, metrics, events } = tracker('validate-pod=warn');
    tracked.observe(configMap('1', { enforcement: '*=dryrun' }));
    assert.equal(actionFor(tracked.enforcement, 'mutate-pod'), 'dryrun');

    tracked.observe(configMap('2', { enforcement: 'validate-pod=never' }));
    assert.equal(actionFor(tracked.enforcement, 'mutate-pod'), 'dryrun', 'the last good one stays');
    assert.match(await metrics.registry.metrics(), /admission_enforcement_config_valid 0/);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.reason, 'InvalidEnforcement');
    assert.match(
      events[0]?.message ?? '',
      /data\.enforcement\.validate-pod: action must be one of deny, warn, dryrun/,
    );

    tracked.observe(configMap('3', {}));
    assert.equal(actionFor(tracked.enforcement, 'validate-pod'), 'warn');
    assert.equal(actionFor(tracked.enforcement, 'mutate-pod'), 'deny');
    assert.match(await metrics.registry.metrics(), /admission_enforcement_config_valid 1/);

    tracked.observe(undefined);
    assert.equal(actionFor(tracked.enforcement, 'validate-pod'), 'warn');
  });
});
