// The box's own buzzer. A real box runs a configured command per beep (for example
// `beep -l {ms}` or a GPIO helper); the simulator records the pattern.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface Buzzer {
  play(beeps: number[], gapMs: number): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SimBuzzer implements Buzzer {
  readonly played: { beeps: number[]; gap: number }[] = [];
  async play(beeps: number[], gap: number): Promise<void> {
    this.played.push({ beeps, gap });
  }
}

/** Runs `command` with `{ms}` replaced by each beep's duration, waiting `gap` between beeps. */
export class CommandBuzzer implements Buzzer {
  private readonly argv: string[];
  constructor(command: string) {
    this.argv = command.split(/\s+/).filter(Boolean);
  }
  async play(beeps: number[], gap: number): Promise<void> {
    const [bin, ...args] = this.argv;
    if (!bin) throw new Error('buzzer command is empty');
    for (const [i, ms] of beeps.entries()) {
      if (i > 0) await sleep(gap);
      await promisify(execFile)(
        bin,
        args.map((a) => a.replaceAll('{ms}', String(ms))),
        { timeout: ms + 5000 },
      );
    }
  }
}
