import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { allow, deny, mutate } from '../../../../webhook/admission/decisions.js';
import { createAdmissionApp, MAX_BODY_BYTES, MAX_OBJECT_DEPTH } from '../../../../webhook/server/app.js';
import { DENY_ALL, type Enforcement } from '../../../../webhook/enforcement/enforcement.js';
import { BodyBudget } from '../../../../webhook/server/read-body.js';
import { MetricsServer } from '../../../../webhook/server/metrics-server.js';
import { admissionMetrics } from '../../../../webhook/metrics/admission-metrics.js';
import type { StateSnapshot } from '../../../../webhook/state.js';
import { stateSnapshot } from '../../../harness/state.js';
import { trustingCallers } from '../../../harness/allowing-server.js';
import type { WebhookEntry } from '../../../../webhook/table.js';

const base: Omit<WebhookEntry, 'name' | 'path' | 'handler' | 'failurePolicy'> = {
  type: 'validating',
  resourceRules: [],
  timeoutSeconds: 10,
  namespaceSelector: {},
  objectSelector: {},
  matchConditions: [],
  featureGate: 'PodValidatingWebhook',
};

const entries: WebhookEntry[] = [
  {
    ...base,
    name: 'allow.test.io',
    path: '/allow',
    failurePolicy: 'Fail',
    handler: () => allow(['looks fine']),
  },
  {
    ...base,
    name: 'deny.test.io',
    path: '/deny',
    failurePolicy: 'Fail',
    handler: () => deny('spec.replicas: Invalid value: 0: must be positive (rule: replicas)'),
  },
  {
    ...base,
    name: 'mutate.test.io',
    path: '/mutate',
    type: 'mutating',
    failurePolicy: 'Fail',
    handler: (req) => {
      const object = structuredClone(req.object!);
      object.metadata = { ...object.metadata, labels: { touched: 'yes' } };
      return mutate(object);
    },
  },
  {
    ...base,
    name: 'throws-fail.test.io',
    path: '/throws-fail',
    failurePolicy: 'Fail',
    handler: () => {
      throw new Error('boom');
    },
  },
  {
    ...base,
    name: 'mutate-refuses-ignore.test.io',
    path: '/mutate-refuses-ignore',
    type: 'mutating',
    failurePolicy: 'Ignore',
    handler: () => deny('metadata.annotations[x]: not JSON'),
  },
  {
    ...base,
    name: 'mutate-throws-ignore.test.io',
    path: '/mutate-throws-ignore',
    type: 'mutating',
    failurePolicy: 'Ignore',
    handler: () => {
      throw new RangeError('Maximum call stack size exceeded');
    },
  },
  {
    ...base,
    name: 'echo-deny.test.io',
    path: '/echo-deny',
    failurePolicy: 'Fail',
    handler: (req) => deny(`metadata.name: ${JSON.stringify(req.object?.metadata.name)}`),
  },
  {
    ...base,
    name: 'many-warnings.test.io',
    path: '/many-warnings',
    failurePolicy: 'Fail',
    handler: () => ({
      ...allow(Array.from({ length: 1000 }, (_, i) => `warning ${i} ${'w'.repeat(5000)}`)),
      audit: { action: 'defaulted', fields: 'spec.backends[0].x,'.repeat(5000) },
    }),
  },
  {
    ...base,
    name: 'throws-ignore.test.io',
    path: '/throws-ignore',
    failurePolicy: 'Ignore',
    handler: () => {
      throw new Error('boom');
    },
  },
];

const emptyState: StateSnapshot = stateSnapshot();

function review(requestFields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'ns',
      name: 'p',
      operation: 'CREATE',
      userInfo: { username: 'tester' },
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } },
      oldObject: null,
      ...requestFields,
    },
  };
}

interface Reply {
  status: number;
  body: string;
  json: () => Record<string, unknown>;
}

describe('admission app', () => {
  let server: Server;
  let port = 0;
  let metricsServer: MetricsServer;
  let metricsPort = 0;
  const metrics = admissionMetrics();
  const logLines: string[] = [];
  const budget = new BodyBudget(MAX_BODY_BYTES * 2);
  let enforcement: Enforcement = DENY_ALL;

  const call = (
    path: string,
    body: string | Buffer | object,
    { method = 'POST', contentType = 'application/json', to = port } = {},
  ): Promise<Reply> =>
    new Promise((resolvePromise, reject) => {
      const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const req = request(
        { host: '127.0.0.1', port: to, path, method, headers: { 'Content-Type': contentType } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolvePromise({
              status: res.statusCode ?? 0,
              body: text,
              json: () => JSON.parse(text) as Record<string, unknown>,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(method === 'GET' ? undefined : payload);
    });

  const response = (reply: Reply): Record<string, unknown> =>
    reply.json().response as Record<string, unknown>;

  before(async () => {
    const app = createAdmissionApp({
      webhooks: () => entries,
      state: () => emptyState,
      readiness: () => Promise.resolve({ ready: false, checks: { test: { ok: false, message: 'not yet' } } }),
      metrics,
      logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) }),
      bodyBudget: budget,
      enforcement: () => enforcement,
      callers: trustingCallers,
    });
    server = createServer((req, res) => void app.callback()(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    metricsServer = new MetricsServer({
      registry: metrics.registry,
      logger: pino({ level: 'silent' }),
      debug: { '/elasticQuota': () => ({ used: 5n }) },
    });
    metricsPort = await metricsServer.listen(0, '127.0.0.1');
  });
  after(async () => {
    server.close();
    await metricsServer.close();
  });

  it('answers /healthz, and /readyz with 503 and the failing check', async () => {
    assert.equal((await call('/healthz', '', { method: 'GET' })).status, 200);
    const ready = await call('/readyz', '', { method: 'GET' });
    assert.equal(ready.status, 503);
    assert.match(ready.body, /not yet/);
  });

  it('allows, echoing the uid and the warnings', async () => {
    const reply = await call('/allow', review());
    assert.equal(reply.status, 200);
    assert.equal(reply.json().apiVersion, 'admission.k8s.io/v1');
    assert.deepEqual(response(reply), { uid: 'uid-1', allowed: true, warnings: ['looks fine'] });
  });

  it('denies with a code, a reason and the message naming the field', async () => {
    const res = response(await call('/deny', review()));
    assert.equal(res.allowed, false);
    assert.deepEqual(res.status, {
      code: 403,
      reason: 'Forbidden',
      message: 'spec.replicas: Invalid value: 0: must be positive (rule: replicas)',
    });
  });

  it('turns a mutated copy into a base64 JSONPatch', async () => {
    const res = response(await call('/mutate', review()));
    assert.equal(res.patchType, 'JSONPatch');
    const patch: unknown = JSON.parse(Buffer.from(res.patch as string, 'base64').toString('utf8'));
    assert.deepEqual(patch, [{ op: 'add', path: '/metadata/labels', value: { touched: 'yes' } }]);
  });

  it('answers a rule that throws with a 500 denial when failurePolicy is Fail', async () => {
    const res = response(await call('/throws-fail', review()));
    assert.equal(res.allowed, false);
    assert.deepEqual(res.status, {
      code: 500,
      reason: 'InternalError',
      message: 'internal error in webhook throws-fail.test.io: boom',
    });
  });

  it('allows with a warning when a failurePolicy=Ignore rule throws', async () => {
    const res = response(await call('/throws-ignore', review()));
    assert.equal(res.allowed, true);
    assert.match(
      String((res.warnings as string[])[0]),
      /internal error in webhook throws-ignore\.test\.io: boom/,
    );
  });

  it('lets an object through unchanged, with a warning, when a mutating Ignore webhook refuses it', async () => {
    const res = response(await call('/mutate-refuses-ignore', review()));
    assert.equal(res.allowed, true);
    assert.equal(res.patch, undefined);
    assert.match(
      String((res.warnings as string[])[0]),
      /mutate-refuses-ignore\.test\.io left the object unchanged: metadata\.annotations\[x\]: not JSON/,
    );
  });

  it('lets an object through unchanged when a mutating Ignore webhook throws', async () => {
    const res = response(await call('/mutate-throws-ignore', review()));
    assert.equal(res.allowed, true);
    assert.match(String((res.warnings as string[])[0]), /internal error in webhook mutate-throws-ignore/);
  });

  // Written as text: JSON.stringify itself overflows the stack on thousands of levels.
  const deepPod = (depth: number): string =>
    JSON.stringify(
      review({
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: 0 },
      }),
    ).replace('"spec":0', `"spec":${'{"v":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`);

  it(`reads objects nested up to ${MAX_OBJECT_DEPTH} levels`, async () => {
    const res = response(await call('/mutate', deepPod(MAX_OBJECT_DEPTH - 2)));
    assert.equal(res.allowed, true);
    assert.equal(res.patchType, 'JSONPatch');
  });

  it('refuses an object nested deeper than the bound before any rule runs, with a 400 that says so', async () => {
    for (const depth of [MAX_OBJECT_DEPTH, 5_000]) {
      const res = response(await call('/throws-fail', deepPod(depth)));
      assert.equal(res.allowed, false);
      const status = res.status as Record<string, unknown>;
      assert.equal(status.code, 400);
      assert.match(String(status.message), /nested deeper than 512 levels; no rule was run/);
    }
  });

  it('lets a too-deep object through unchanged on a mutating Ignore webhook', async () => {
    const res = response(await call('/mutate-refuses-ignore', deepPod(5_000)));
    assert.equal(res.allowed, true);
    assert.match(String((res.warnings as string[])[0]), /nested deeper than 512 levels/);
  });

  it('refuses an object with a map of more than 10,000 keys before any rule runs', async () => {
    const annotations = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`a${i}`, '']));
    const wide = review({
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', annotations } },
    });
    const refused = response(await call('/throws-fail', wide));
    assert.equal(refused.allowed, false);
    assert.match(
      String((refused.status as Record<string, unknown>).message),
      /a map or list of more than 10000 entries; no rule was run/,
    );
    const passed = response(await call('/mutate-refuses-ignore', wide));
    assert.equal(passed.allowed, true);
    assert.equal(passed.patch, undefined);
  });

  it('answers an envelope field nested thousands deep with a short 400, not a 500', async () => {
    const text = `{"apiVersion":${'['.repeat(4000)}${']'.repeat(4000)},"kind":"AdmissionReview"}`;
    const reply = await call('/allow', text);
    assert.equal(reply.status, 400);
    assert.equal(reply.body.length < 300, true, reply.body);
    assert.match(reply.json().message as string, /apiVersion must be admission\.k8s\.io\/v1, got an array/);
  });

  it('bounds a message that echoes what the user sent, in the response and in the log', async () => {
    const name = 'n'.repeat(60 * 1024);
    const reply = await call(
      '/echo-deny',
      review({ name, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' } } }),
    );
    const message = String((response(reply).status as Record<string, unknown>).message);
    assert.equal(message.length <= 4096, true);
    assert.match(message, /more chars\)$/);
    const line = logLines.findLast((entry) => entry.includes('echo-deny.test.io')) ?? '';
    assert.equal(line.length < 2048, true, `log line of ${line.length} chars`);
  });

  it('bounds the number and length of warnings', async () => {
    const warnings = response(await call('/many-warnings', review())).warnings as string[];
    assert.equal(warnings.length, 21);
    assert.equal(
      warnings.every((warning) => warning.length <= 1024),
      true,
    );
    assert.equal(warnings[20], '…and 980 more warnings');
    const line = logLines.findLast((entry) => entry.includes('many-warnings.test.io')) ?? '';
    assert.equal(line.length < 2048, true, `log line of ${line.length} chars`);
  });

  it('answers 503 while the bodies being read hold the whole budget, and frees it afterwards', async () => {
    assert.equal(budget.take(budget.limit), true);
    try {
      const reply = await call('/allow', review());
      assert.equal(reply.status, 503);
      assert.match(reply.json().message as string, /too many request bodies/);
    } finally {
      budget.give(budget.limit);
    }
    assert.equal(response(await call('/allow', review())).allowed, true);
    assert.equal(budget.bytesHeld, 0);
  });

  const badRequests: [string, () => Promise<Reply>, number, RegExp][] = [
    ['an unknown path', () => call('/nope', review()), 404, /no webhook is served at \/nope/],
    ['GET', () => call('/allow', '', { method: 'GET' }), 405, /GET is not allowed/],
    [
      'a wrong content type',
      () => call('/allow', review(), { contentType: 'text/plain' }),
      415,
      /Content-Type/,
    ],
    ['a body that is not JSON', () => call('/allow', '{nope'), 400, /not valid JSON/],
    ['a JSON array', () => call('/allow', '[]'), 400, /must be a JSON object/],
    [
      'a wrong apiVersion',
      () => call('/allow', { ...review(), apiVersion: 'admission.k8s.io/v1beta1' }),
      400,
      /apiVersion must be admission\.k8s\.io\/v1, got "admission\.k8s\.io\/v1beta1"/,
    ],
    ['a wrong kind', () => call('/allow', { ...review(), kind: 'Pod' }), 400, /kind must be AdmissionReview/],
    [
      'no request',
      () => call('/allow', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      400,
      /has no request/,
    ],
    ['no uid', () => call('/allow', review({ uid: '' })), 400, /request\.uid must be a non-empty string/],
    ['an unknown operation', () => call('/allow', review({ operation: 'PATCH' })), 400, /request\.operation/],
    [
      'no object on CREATE',
      () => call('/allow', review({ object: null })),
      400,
      /request\.object is required for CREATE/,
    ],
    [
      'no oldObject on UPDATE',
      () => call('/allow', review({ operation: 'UPDATE' })),
      400,
      /request\.oldObject is required for UPDATE/,
    ],
    ['no kind', () => call('/allow', review({ kind: undefined })), 400, /request\.kind is required/],
    [
      'a body over 7 MiB',
      () => call('/allow', Buffer.alloc(MAX_BODY_BYTES + 1, 0x20)),
      413,
      /exceeds the 7340032-byte limit/,
    ],
  ];
  for (const [label, send, status, message] of badRequests) {
    it(`refuses ${label} with ${status} and says why`, async () => {
      const reply = await send();
      assert.equal(reply.status, status, reply.body);
      assert.match(reply.json().message as string, message);
    });
  }

  it('keeps serving after every bad request', async () => {
    const reply = await call('/allow', review({ uid: 'after' }));
    assert.equal(response(reply).uid, 'after');
  });

  it('accepts a review of two 3 MiB objects', async () => {
    const big = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns' },
      data: 'x'.repeat(3 * 1024 * 1024 - 200),
    };
    const reply = await call('/allow', review({ operation: 'UPDATE', object: big, oldObject: big }));
    assert.equal(reply.status, 200, reply.body.slice(0, 200));
  });

  it('serves neither metrics nor debug views on the admission port', async () => {
    assert.equal((await call('/metrics', '', { method: 'GET' })).status, 404);
    assert.equal((await call('/elasticQuota', '', { method: 'GET' })).status, 404);
  });

  it('serves debug views on the metrics port', async () => {
    const view = await call('/elasticQuota', '', { method: 'GET', to: metricsPort });
    assert.deepEqual(view.json(), { used: '5' });
  });

  it('in enforcement warn admits what it would refuse, with the refusal as a warning, and counts it', async () => {
    enforcement = { byWebhook: new Map([['deny.test.io', 'warn']]), fallback: 'deny' };
    try {
      const reply = response(await call('/deny', review({ uid: 'warned' })));
      assert.equal(reply.allowed, true);
      assert.deepEqual(reply.warnings, [
        'deny.test.io would refuse this (enforcement warn): spec.replicas: Invalid value: 0: must be positive (rule: replicas)',
      ]);
      const line = logLines.find((entry) => entry.includes('"uid":"warned"'));
      assert.match(line ?? '', /"outcome":"would-deny","enforcement":"warn"/);
      assert.match(line ?? '', /"message":"spec\.replicas: Invalid value/);
    } finally {
      enforcement = DENY_ALL;
    }
  });

  it('in enforcement dryrun admits silently and returns no patch, logging what it would change', async () => {
    enforcement = { byWebhook: new Map(), fallback: 'dryrun' };
    try {
      const refused = response(await call('/deny', review({ uid: 'dry-deny' })));
      assert.deepEqual(refused, { uid: 'dry-deny', allowed: true });
      const mutated = response(await call('/mutate', review({ uid: 'dry-patch' })));
      assert.deepEqual(mutated, { uid: 'dry-patch', allowed: true });
      const line = logLines.find((entry) => entry.includes('"uid":"dry-patch"'));
      assert.match(
        line ?? '',
        /"outcome":"would-patch","enforcement":"dryrun","wouldChange":\["add \/metadata\/labels"\]/,
      );
    } finally {
      enforcement = DENY_ALL;
    }
    const metricsText = (await call('/metrics', '', { method: 'GET', to: metricsPort })).body;
    assert.match(
      metricsText,
      /admission_decisions_total\{webhook="deny\.test\.io",outcome="would-deny",enforcement="dryrun"\} 1/,
    );
    assert.match(
      metricsText,
      /admission_decisions_total\{webhook="mutate\.test\.io",outcome="would-patch",enforcement="dryrun"\} 1/,
    );
  });

  it('exposes decision metrics on the metrics port', async () => {
    const metrics = await call('/metrics', '', { method: 'GET', to: metricsPort });
    assert.match(
      metrics.body,
      /admission_fail_open_total\{webhook="mutate-refuses-ignore\.test\.io",cause="refusal"\} 1/,
    );
    assert.match(
      metrics.body,
      /admission_decisions_total\{webhook="deny\.test\.io",outcome="denied",enforcement="deny"\} 1/,
    );
    assert.match(
      metrics.body,
      /admission_decisions_total\{webhook="throws-fail\.test\.io",outcome="error",enforcement="deny"\} 1/,
    );
    assert.match(metrics.body, /admission_bad_requests_total\{status="413"\} 1/);
  });
});
