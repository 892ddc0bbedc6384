// A loopback port the kernel calls free now (bound to 0 and let go), for a peer that must be
// told its port (cupsd, ippeveprinter). Another process may take it before the peer binds it:
// each caller retries when its peer says the port is in use.
import { type AddressInfo, createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
