// A callback receiver: verifies each callback's signature, de-duplicates, and handles each
// event by type. It asks the service for a test callback and stops once that has arrived.
// BOXHUB_CALLBACK_SECRET: the application's whsec_ secret; during a rotation both, new first,
// separated by a comma. PORT: where to listen (0: any free port).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Boxhub, CallbackReceiver, InvalidCallbackError, type CallbackEvent } from '@boxhub/sdk';

const boxhub = new Boxhub({ baseUrl: process.env.BOXHUB_URL!, apiKey: process.env.BOXHUB_API_KEY! });
const receiver = new CallbackReceiver({ secrets: process.env.BOXHUB_CALLBACK_SECRET!.split(',') });
const seen = new Set<string>(); // in production: a table with a unique key on the callback id

function handle(event: CallbackEvent): void {
  switch (event.type) {
    case 'callback.test':
      console.log(`test callback ${event.id} arrived`);
      server.close();
      break;
    case 'recognition.result':
      if (event.body.result)
        console.log(`student ${event.body.result.student_id}: ${JSON.stringify(event.body.result.fills)}`);
      else console.log(`a card could not be read: error ${event.body.error_code}`);
      break;
    case 'recognition.end':
      console.log(`recognition ${event.body.uuid} finished`);
      break;
    case 'unknown':
      break; // a newer service's event: acknowledged, ignored
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let event: CallbackEvent;
    try {
      // The raw bytes, not re-serialised JSON: the signature covers them exactly.
      event = receiver.receive({ method: req.method!, headers: req.headers, body: Buffer.concat(chunks) });
    } catch (e) {
      if (!(e instanceof InvalidCallbackError)) throw e;
      console.error(`refused a callback (${e.reason}): ${e.message}`);
      res.writeHead(400).end();
      return;
    }
    // Answer 200 at once (within 5 s, or the service retries), then do the work.
    res.writeHead(200).end();
    if (seen.has(event.id)) return; // delivery is at least once
    seen.add(event.id);
    handle(event);
  });
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', async () => {
  const { port } = server.address() as AddressInfo;
  // In production this is your receiver's public https address.
  const { id } = await boxhub.callbacks.test({ callback_url: `http://127.0.0.1:${port}/boxhub/callbacks` });
  console.log(`asked for test callback ${id}`);
});
