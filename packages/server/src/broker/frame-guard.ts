// The embedded broker's packet size limit. aedes (1.x) has no maximum packet size: its parser
// (mqtt-packet) collects a packet's whole remaining length in memory before anything looks at
// it, so one box announcing a 100 MB PUBLISH made the server hold 100 MB (six such boxes took
// it from 271 MB to 693 MB RSS). No option or hook in aedes sees a packet before it is
// complete, hence this stream of our own between the socket and aedes: it reads each packet's
// fixed header as the bytes pass ([MQTT-2.2]: one type byte, then the remaining length as a
// variable byte integer of at most four bytes) and closes the connection as soon as a length
// over the limit is announced, before its payload arrives. Bytes are passed on unchanged and
// never copied; only the header bytes are looked at.
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

export type FrameProblem = { kind: 'too_large'; bytes: number } | { kind: 'malformed' };

/** Follows MQTT framing across chunks; `feed` returns a problem as soon as one is seen. */
export class MqttFrameReader {
  private readonly max: number;
  /** 0: at a packet's type byte; 1-4: in its remaining length; 5: in its body. */
  private state = 0;
  private length = 0;
  private multiplier = 1;
  private left = 0;
  constructor(maxPacketBytes: number) {
    this.max = maxPacketBytes;
  }

  feed(chunk: Buffer): FrameProblem | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.state === 5) {
        const skip = Math.min(this.left, chunk.length - i);
        i += skip;
        this.left -= skip;
        if (this.left === 0) this.state = 0;
        continue;
      }
      const byte = chunk[i++]!;
      if (this.state === 0) {
        this.state = 1;
        this.length = 0;
        this.multiplier = 1;
        continue;
      }
      this.length += (byte & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      if (byte & 0x80) {
        if (this.state === 4) return { kind: 'malformed' }; // [MQTT-1.5.5]: at most four bytes
        this.state++;
        continue;
      }
      // Fixed header (1 + length bytes) plus the remaining length is the packet's size.
      const size = 1 + this.state + this.length;
      if (size > this.max) return { kind: 'too_large', bytes: size };
      this.left = this.length;
      this.state = this.left === 0 ? 0 : 5;
    }
    return undefined;
  }
}

/** The socket as aedes sees it: the same bytes, cut off at the first oversized packet. */
export class FrameGuard extends Duplex {
  private readonly socket: Socket;
  private corked = false;
  constructor(socket: Socket, maxPacketBytes: number, onProblem: (p: FrameProblem) => void) {
    super({ allowHalfOpen: false });
    this.socket = socket;
    const reader = new MqttFrameReader(maxPacketBytes);
    socket.on('data', (chunk: Buffer) => {
      const problem = reader.feed(chunk);
      if (problem) {
        onProblem(problem);
        socket.destroy();
        this.destroy();
        return;
      }
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('close', () => this.destroy());
    socket.on('error', (e) => this.destroy(e));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    // aedes writes each packet on its own (a login's CONNACK, SUBACK and PUBACKs, a command and
    // its retained state); the packets of one turn of the event loop go out in one writev
    // instead of a syscall each, which was a fifth of the node's CPU in a reconnect storm
    // (bench/README.md, "reconnect-storm").
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    // Done as soon as the socket took it, unless the socket is full: then this stream's
    // buffer fills too and aedes sees write() return false (its slow-client handling).
    if (this.socket.write(chunk, encoding)) cb();
    else this.socket.once('drain', () => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.socket.end(cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.socket.destroy();
    cb(err);
  }
}
