import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { allow, deny, mutate } from '../../../../webhook/admission/decisions.js';
import { createAdmissionApp, MAX_BODY_BYTES } from '../../../../webhook/server/app.js';
import { OperatorMetrics } from '../../../../webhook/server/metrics.js';
import type { StateSnapshot } from '../../../../webhook/state.js';
import { stateSnapshot } from '../../../harness/state.js';
import type { WebhookEntry } from '../../../../webhook/table.js';

const base: Omit<WebhookEntry, 'name' | 'path' | 'handler' | 'failurePolicy'> = {
  type: 'validating',
  rules: [],
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

  const call = (
    path: string,
    body: string | Buffer | object,
    { method = 'POST', contentType = 'application/json' } = {},
  ): Promise<Reply> =>
    new Promise((resolvePromise, reject) => {
      const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const req = request(
        { host: '127.0.0.1', port, path, method, headers: { 'Content-Type': contentType } },
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
      metrics: new OperatorMetrics(),
      logger: pino({ level: 'silent' }),
    });
    server = createServer((req, res) => void app.callback()(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
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
      'a body over 3 MiB',
      () => call('/allow', Buffer.alloc(MAX_BODY_BYTES + 1, 0x20)),
      413,
      /exceeds the 3145728-byte limit/,
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

  it('exposes decision metrics', async () => {
    const metrics = await call('/metrics', '', { method: 'GET' });
    assert.match(metrics.body, /admission_decisions_total\{webhook="deny\.test\.io",outcome="denied"\} 1/);
    assert.match(
      metrics.body,
      /admission_decisions_total\{webhook="throws-fail\.test\.io",outcome="error"\} 1/,
    );
    assert.match(metrics.body, /admission_bad_requests_total\{status="413"\} 1/);
  });
});
