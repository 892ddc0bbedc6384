// Test fixture: a DNS-SD announcement through the machine's avahi (avahi-publish, from
// avahi-utils), as ipp-usb announces a USB device's IPP printer and eSCL scanner. close()
// withdraws it (avahi-publish withdraws what it published when it ends).
import { spawn } from 'node:child_process';
import { ensureDbusAvahi } from './ippeveprinter.ts';

export interface Announcement {
  readonly name: string;
  close(): Promise<void>;
}

export async function announce(name: string, type: string, port: number, txt: string[]): Promise<Announcement> {
  ensureDbusAvahi();
  const child = spawn('avahi-publish', ['-s', name, type, String(port), ...txt], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      if (/Established under name/.test(out)) resolve();
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`avahi-publish exited (${code}): ${out}`)));
    setTimeout(
      () => reject(new Error(`avahi-publish did not establish '${name}' within 10 s: ${out}`)),
      10_000,
    ).unref();
  });
  return {
    name,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
