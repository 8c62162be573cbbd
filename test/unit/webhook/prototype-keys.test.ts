/**
 * A key a user chooses is only a key. Every webhook path of the table gets its example reviews
 * with each of Object.prototype's names (and `__proto__`) put into every map of the object, and
 * into every map of the JSON and YAML its strings hold: each answer is a decision (allowed,
 * refused naming a field, or a patch), never a 500 or an internal error, and no rule throws.
 * And it is the decision the same review gets with an ordinary key of the same shape in its place
 * (one letter changed, so it sorts among the others alike), that key's name aside.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { createAdmissionApp } from '../../../webhook/server/app.js';
import { admissionMetrics } from '../../../webhook/metrics/admission-metrics.js';
import type { JsonObject } from '../../../webhook/admission/types.js';
import { trustingCallers } from '../../harness/allowing-server.js';
import { seeds } from '../../fuzz/seeds.js';
import { fuzzState, fuzzWebhooks } from '../../fuzz/world.js';
import { mapSites, PROTOTYPE_KEYS, type PrototypeKey } from '../../fuzz/prototype-keys.js';

/** Each name's ordinary twin: one letter changed, same characters classes and length. */
const TWIN: Readonly<Record<PrototypeKey, string>> = {
  // Computed: in an object literal, `__proto__: value` would set the prototype instead.
  ['__proto__']: '__protp__',
  constructor: 'constructpr',
  prototype: 'prototyqe',
  hasOwnProperty: 'hasOwnPropertz',
  toString: 'toStrinh',
  valueOf: 'valuePf',
  __defineGetter__: '__defineGettes__',
};

interface Reply {
  status: number;
  body: string;
}

interface ReviewResponse {
  uid?: unknown;
  allowed?: unknown;
  status?: { code?: unknown; message?: unknown };
  patch?: unknown;
  patchType?: unknown;
  warnings?: unknown;
}

/** What is wrong with an answer, or undefined when it is a well-formed decision. */
function problemOf(reply: Reply, uid: string): string | undefined {
  if (reply.status !== 200) return `HTTP ${reply.status}: ${reply.body.slice(0, 300)}`;
  let response: ReviewResponse;
  try {
    response = (JSON.parse(reply.body) as { response: ReviewResponse }).response;
  } catch {
    return `not JSON: ${reply.body.slice(0, 300)}`;
  }
  if (response.uid !== uid) return `answered uid ${JSON.stringify(response.uid)}`;
  if (typeof response.allowed !== 'boolean') return 'no allowed';
  const said = [
    typeof response.status?.message === 'string' ? response.status.message : '',
    ...(Array.isArray(response.warnings) ? (response.warnings as unknown[]).map(String) : []),
  ].join('\n');
  if (response.status?.code === 500 || /internal error/i.test(said)) return `internal error: ${said}`;
  if (!response.allowed && (typeof response.status?.message !== 'string' || response.status.message === ''))
    return 'a refusal without a message';
  if (response.patch !== undefined) {
    if (response.patchType !== 'JSONPatch') return `patchType ${JSON.stringify(response.patchType)}`;
    if (typeof response.patch !== 'string') return 'a patch that is no base64 text';
    const patch: unknown = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    if (!Array.isArray(patch)) return 'a patch that is no list of operations';
  }
  return undefined;
}

/** The answer with its uid and patch readable, and `from` spelt `to` wherever it appears. */
function answerText(reply: Reply, from: string, to: string): string {
  const { response } = JSON.parse(reply.body) as { response: ReviewResponse };
  const patch =
    typeof response.patch === 'string'
      ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown)
      : undefined;
  return JSON.stringify({ ...response, uid: '', patch }).replaceAll(from, to);
}

describe('keys named like Object.prototype members', () => {
  let server: Server;
  let port = 0;
  const errors: string[] = [];

  before(async () => {
    const app = createAdmissionApp({
      webhooks: () => fuzzWebhooks(),
      state: () => fuzzState(),
      readiness: () => Promise.resolve({ ready: true, checks: {} }),
      metrics: admissionMetrics(),
      logger: pino({ level: 'error' }, { write: (line: string) => void errors.push(line) }),
      callers: trustingCallers,
    });
    server = createServer((req, res) => void app.callback()(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
  });

  const send = (path: string, body: string): Promise<Reply> =>
    new Promise((resolvePromise, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolvePromise({ status: res.statusCode ?? 0, body: text });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  const paths = [...new Set(seeds().map((seed) => seed.path))];
  for (const path of paths) {
    it(`${path}: each name in every map is a decision`, async () => {
      const failures: string[] = [];
      let sent = 0;
      for (const seed of seeds().filter((candidate) => candidate.path === path)) {
        for (const site of mapSites(seed.request)) {
          for (const key of PROTOTYPE_KEYS) {
            const uid = `proto-${sent++}`;
            const review = (name: string): string =>
              JSON.stringify({
                apiVersion: 'admission.k8s.io/v1',
                kind: 'AdmissionReview',
                request: { uid, ...site.withKey(name) },
              } satisfies JsonObject);
            errors.length = 0;
            const reply = await send(path, review(key));
            const problem = problemOf(reply, uid) ?? errors[0];
            const where = `${seed.label}: ${key} in ${site.where}`;
            if (problem !== undefined) {
              failures.push(`${where}: ${problem.slice(0, 400)}`);
              continue;
            }
            const twin = TWIN[key];
            const ours = answerText(reply, twin, key);
            const ordinary = answerText(await send(path, review(twin)), twin, key);
            if (ours !== ordinary)
              failures.push(
                `${where}: answered\n    ${ours.slice(0, 600)}\n  not as for ${twin}:\n    ${ordinary.slice(0, 600)}`,
              );
          }
        }
      }
      assert.ok(sent > 0, `no map to put a key into in ${path}'s examples`);
      assert.deepEqual(failures, [], `${failures.length} of ${sent} reviews:\n${failures.join('\n')}`);
    });
  }
});
