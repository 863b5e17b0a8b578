import { Writable } from 'node:stream';

/** A log destination that keeps every line the app writes, as text and as parsed JSON. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(line);
    done();
  }

  get text(): string {
    return this.lines.join('\n');
  }

  /** Every line as an object; fails the test on a line that is not JSON. */
  get entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** The access-log lines of one request id. */
  requestLines(reqId: string): Record<string, unknown>[] {
    return this.entries.filter((e) => e.reqId === reqId && 'status' in e);
  }
}
