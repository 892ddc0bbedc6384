// Progress for people on a terminal (one line, redrawn in place) and plain lines when stderr is
// piped or logged (no terminal control sequences there). Progress goes to stderr, so stdout
// carries only results; with --json it is shown only to a person (stderr a terminal), never
// mixed into what a script reads.
export class Progress {
  /** Redraw in place: stderr is a terminal that understands it. */
  readonly tty: boolean;
  private readonly quiet: boolean;
  private readonly stream: NodeJS.WriteStream;
  private last = '';

  constructor(o: { json: boolean; stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv }) {
    this.stream = o.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY) && (o.env ?? process.env).TERM !== 'dumb';
    this.quiet = o.json && !this.tty;
  }

  /** The current state: redrawn on a terminal, a line when piped; written only when it changed. */
  update(text: string): void {
    if (this.quiet || text === this.last) return;
    if (this.tty) {
      this.last = text;
      this.stream.write(`\r\x1b[2K${this.fit(text)}`);
    } else {
      this.last = text;
      this.stream.write(`${text}\n`);
    }
  }

  /** A passing state worth showing only on a terminal (opening the database…); nothing when piped. */
  status(text: string): void {
    if (this.tty) this.update(text);
  }

  /** A line that stays (an item downloaded, a student read). */
  line(text: string): void {
    if (this.quiet) return;
    if (this.tty && this.last) this.stream.write('\r\x1b[2K');
    this.stream.write(`${text}\n`);
    if (this.tty && this.last) this.stream.write(this.fit(this.last));
  }

  /** The end: a redrawn line stays on the terminal. */
  done(): void {
    if (!this.quiet && this.tty && this.last) this.stream.write('\n');
    this.last = '';
  }

  /** The end, erasing a redrawn line (passing states leave nothing behind). */
  clear(): void {
    if (!this.quiet && this.tty && this.last) this.stream.write('\r\x1b[2K');
    this.last = '';
  }

  /** A redrawn line must not wrap, or \r returns only to its last row. */
  private fit(text: string): string {
    const cols = this.stream.columns || 80; // 0 on a terminal that has no size
    return text.length < cols ? text : `${text.slice(0, Math.max(0, cols - 2))}…`;
  }
}

/**
 * A bar that grows page by page while the length of the stack is unknown (a feeder does not
 * say how much paper it holds): one cell per page (several once the stack is longer than the
 * bar), `█` for pages in recorded items, `▒` for pages scanned whose item is still being made.
 */
export function pageBar(scanned: number, recorded: number, width = 30): string {
  const perCell = Math.max(1, Math.ceil(scanned / width));
  const done = Math.floor(Math.min(recorded, scanned) / perCell);
  const all = Math.ceil(scanned / perCell);
  return `▕${'█'.repeat(done)}${'▒'.repeat(all - done)}${' '.repeat(width - all)}▏`;
}

/** The result of a command on stdout: JSON with --json, else text for a person. */
export function emit(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Ctrl-C during a long operation: the first asks the task to stop (`stop`), and the command
 * still collects what was done; a second one exits at once. Either way the exit code is 130.
 */
export class Interrupt {
  interrupted = false;
  private readonly onSignal = () => {
    if (this.interrupted) {
      process.stderr.write('interrupted again: exiting without waiting\n');
      process.exit(130);
    }
    this.interrupted = true;
    this.stop();
  };

  private readonly stop: () => void;

  constructor(stop: () => void) {
    this.stop = stop;
    process.on('SIGINT', this.onSignal);
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal);
  }
}
