/** Talks to the Kthena oracle: one JSON line per review, answered in order. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What Kthena's handler wrote: an HTTP status and body, or the panic it raised. */
export interface OracleAnswer {
  status: number;
  body: string;
  panic?: string;
}

export class KthenaOracle {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((answer: OracleAnswer) => void)[] = [];
  private failure: Error | undefined;

  constructor(binary: string) {
    this.child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.waiting.shift()?.(JSON.parse(line) as OracleAnswer);
    });
    this.child.on('exit', (code, signal) => {
      this.failure = new Error(`the Kthena oracle exited (${signal ?? `exit ${code}`})`);
    });
  }

  answer(path: string, body: string): Promise<OracleAnswer> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${JSON.stringify({ path, body })}\n`);
    });
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
  }
}
