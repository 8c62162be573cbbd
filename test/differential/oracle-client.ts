/**
 * Talks to the oracle process (test/differential/oracle/main.go): one JSON request per line on its
 * stdin, one answer per line on its stdout, in order. Requests may be pipelined; answers are
 * matched to requests by their order.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { JsonObject } from '../../webhook/admission/types.js';

export interface OracleAnswer {
  status?: number;
  body?: JsonObject;
  panic?: string;
  /** The goroutine's stack at a panic. */
  stack?: string;
  object?: JsonObject;
  error?: string;
  ok?: boolean;
}

export type OracleRequest =
  | { op: 'world'; objects: JsonObject[] }
  | { op: 'review'; path: string; review: JsonObject }
  | { op: 'canonical'; object: JsonObject };

export class OracleClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve: (answer: OracleAnswer) => void; reject: (error: Error) => void }[] =
    [];
  private stderr = '';
  private exited: Error | undefined;

  constructor(binary: string, featureGates: string) {
    this.child = spawn(binary, [`--feature-gates=${featureGates}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8192);
      if (process.env.ORACLE_LOG) process.stderr.write(chunk);
    });
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      const next = this.waiting.shift();
      if (!next) return;
      try {
        next.resolve(JSON.parse(line) as OracleAnswer);
      } catch (error) {
        next.reject(new Error(`the oracle answered a line that is not JSON: ${(error as Error).message}`));
      }
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(
        `the oracle exited (${signal ?? `exit ${code}`})${this.stderr ? `; its stderr:\n${this.stderr}` : ''}`,
      );
      for (const waiter of this.waiting.splice(0)) waiter.reject(this.exited);
    });
  }

  ask(request: OracleRequest): Promise<OracleAnswer> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) =>
      this.child.once('exit', () => {
        resolve();
      }),
    );
    this.child.stdin.end();
    await exited;
  }
}
