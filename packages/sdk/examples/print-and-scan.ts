// Print a worksheet on a box, then scan the stack in its feeder and keep the PDFs.
// BOXHUB_URL, BOXHUB_API_KEY: your service and API key; BOXHUB_DEVICE_UUID: a bound box;
// WORKSHEET: a PDF to print; OUT: where the scanned PDFs go.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Boxhub } from '@boxhub/sdk';

const boxhub = new Boxhub({ baseUrl: process.env.BOXHUB_URL!, apiKey: process.env.BOXHUB_API_KEY! });
const client_uuid = process.env.BOXHUB_DEVICE_UUID!;

// What the printer can do: sizes, and under each its media types, duplex, quality, trays.
const printer = await boxhub.print.capability({ client_uuid });
console.log(
  `printer: ${printer.make} ${printer.model}, sizes ${printer.media_sizes.map((m) => m.media_size).join(' ')}`,
);

// The file goes inline with its MD5; the server checks it and the box prints it.
const task = await boxhub.print.file(client_uuid, process.env.WORKSHEET!, { options: { number: 2 } }); // two copies
const printed = await boxhub.print.waitForFinish({ client_uuid, print_uuid: task.uuid! }, { intervalMs: 200 });
console.log(`printed: error_code ${printed.error_code}, ${printed.pages} sides`);

// Scan both sides of every sheet in the feeder; PDF items are cut as the stack scans (docs/scanning.md).
const scan = await boxhub.scan.create({ client_uuid, options: { duplex: true, resolution: 200 } });
const done = await boxhub.scan.waitForFinish({ client_uuid, scan_uuid: scan.uuid! }, { intervalMs: 200 });
console.log(`scanned: error_code ${done.error_code}, ${done.total_pages} pages in ${done.item_size} item(s)`);

// Each item is downloaded with its MD5 and size checked; the file appears only when both match.
await mkdir(process.env.OUT!, { recursive: true });
for await (const item of boxhub.scan.items({ client_uuid, scan_uuid: scan.uuid! })) {
  const file = await boxhub.scan.download(item, join(process.env.OUT!, `${item.item_id}.pdf`));
  console.log(
    `item ${item.item_id}: ${item.pages} pages, ${file.bytes} bytes, MD5 ${file.md5 === item.check_sum ? 'checked' : 'WRONG'}`,
  );
}
