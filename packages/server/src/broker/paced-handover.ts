// Connections the embedded broker accepted, handed to aedes a few at a time. When a node comes
// back, the kernel holds up to LISTEN_BACKLOG boxes' connections, and Node accepts every one of
// them in one turn of the event loop; starting to read each at once (and aedes setting up a
// client for each) made one turn of 390 ms in a storm of 10,000 boxes, and every HTTP request
// waited through it (bench/README.md, "reconnect-storm"). The server accepts them paused
// (`pauseOnConnect`) and this queue hands `perTurn` of them over per turn, so the requests get a
// turn in between. First come, first served.

export class PacedHandover<T> {
  private queue: T[] = [];
  private head = 0;
  private scheduled = false;
  private closed = false;
  private readonly take: (item: T) => void;
  private readonly drop: (item: T) => void;
  private readonly perTurn: number;

  /**
   * `take` gets each item in its turn and must not throw; `drop` gets each item still waiting
   * when the queue closes.
   */
  constructor(take: (item: T) => void, drop: (item: T) => void, perTurn = 64) {
    this.take = take;
    this.drop = drop;
    this.perTurn = perTurn;
  }

  get waiting(): number {
    return this.queue.length - this.head;
  }

  push(item: T): void {
    if (this.closed) {
      this.drop(item);
      return;
    }
    this.queue.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  /** Drops what still waits; later pushes are dropped at once. */
  close(): void {
    this.closed = true;
    const left = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    for (const item of left) this.drop(item);
  }

  private readonly drain = (): void => {
    const end = Math.min(this.queue.length, this.head + this.perTurn);
    while (this.head < end) {
      const item = this.queue[this.head] as T;
      this.head++;
      this.take(item);
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
      this.scheduled = false;
    } else {
      setImmediate(this.drain);
    }
  };
}
