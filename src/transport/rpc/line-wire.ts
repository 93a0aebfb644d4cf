import type { Readable, Writable } from 'node:stream';
import { toDisposable, type IDisposable } from '../../core/base/lifecycle';
import { FrameWriter } from '../base/frame-writer';
import type { MessageWire } from './json-rpc-peer';

/**
 * A byte stream as a peer's wire, one message per line (docs/protocol.md#2-framing): what the
 * host's sockets and `RpcClient` send through. `input` is what the other end sends (read by the
 * framing, paused and resumed here), `output` what we send it: the same socket, or a child's
 * stdout and stdin (a bridge). Lines are written through reused blocks (`FrameWriter`).
 */
export class LineWire implements MessageWire {
  private readonly _out: FrameWriter;

  constructor(
    private readonly _input: Readable,
    private readonly _output: Writable,
  ) {
    this._out = new FrameWriter(_output);
  }

  get writable(): boolean {
    return !this._output.destroyed && this._output.writable;
  }

  get unsentBytes(): number {
    return this._output.writableLength + this._out.gatheredBytes;
  }

  send(text: string): void {
    this._out.write(text + '\n');
  }

  cork(): void {
    this._out.cork();
  }

  uncork(): void {
    this._out.uncork();
  }

  whenDrained(fn: () => void): IDisposable {
    const output = this._output;
    const once = () => {
      output.off('drain', once);
      output.off('close', once);
      fn();
    };
    output.on('drain', once);
    output.on('close', once);
    return toDisposable(() => {
      output.off('drain', once);
      output.off('close', once);
    });
  }

  pauseInput(): void {
    this._input.pause();
  }

  resumeInput(): void {
    this._input.resume();
  }

  end(): void {
    this._output.end();
  }
}
