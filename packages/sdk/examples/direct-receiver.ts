// A direct-transfer receiver (docs/direct-transfer.md): starts a scan on a box with its pages sent
// here as they are scanned, keeps each page, and stops at the end of the scan.
// BOXHUB_URL, BOXHUB_API_KEY: your service and API key; BOXHUB_DEVICE: the box's uuid;
// DIRECT_HOST: this machine's address as the box reaches it; PORT (0: any free port); OUT: a directory.
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Boxhub, DirectTransferReceiver } from '@boxhub/sdk';

const boxhub = new Boxhub({ baseUrl: process.env.BOXHUB_URL!, apiKey: process.env.BOXHUB_API_KEY! });
const out = process.env.OUT ?? 'pages';
await mkdir(out, { recursive: true });
let secret: string | undefined; // from scan create; a batch that comes before it is told to retry

const receiver = new DirectTransferReceiver({
  secret: () => secret,
  // Answered 2xx once this resolves: keep the pages before returning (the box keeps them until then).
  onPages: async (batch) => {
    for (const p of batch.pages) await writeFile(`${out}/${batch.scan_uuid}-${p.page_number}.jpg`, p.data);
    console.log(`batch ${batch.batch}: pages ${batch.pages.map((p) => p.page_number).join(', ')}`);
  },
  onEnd: (end) => {
    console.log(`scan ended with error ${end.error_code}: ${end.totals.pages} pages in ${end.totals.batches} batches`);
    server.close();
  },
});

const server = createServer(receiver.handler()).listen(Number(process.env.PORT ?? 8080));
await once(server, 'listening');
const addr = `http://${process.env.DIRECT_HOST ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}/pages`;
const scan = await boxhub.scan.create({
  client_uuid: process.env.BOXHUB_DEVICE!,
  options: { direct_mode: 1, direct_page_size: 2, direct_addr: addr },
});
secret = scan.direct_secret;
console.log(`scanning ${scan.uuid}`);
