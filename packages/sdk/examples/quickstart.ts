// Bind a box to your application, read its state and make it beep.
// BOXHUB_URL, BOXHUB_API_KEY: your service and API key; BOXHUB_DEVICE_CODE: the code on the box's label.
import { Boxhub, BoxhubError, ErrorCode } from '@boxhub/sdk';

const boxhub = new Boxhub({
  baseUrl: process.env.BOXHUB_URL!,
  apiKey: process.env.BOXHUB_API_KEY!,
  // The defaults, spelled out: 30 s per attempt; network failures retried twice.
  timeoutMs: 30_000,
  retry: { retries: 2, baseDelayMs: 500, maxDelayMs: 5000 },
  onRetry: (e) => console.error(`retrying ${e.method} ${e.path} in ${Math.round(e.delayMs)} ms`),
});

const { uuid } = await boxhub.devices.getUuid({ code: process.env.BOXHUB_DEVICE_CODE! });
if (!uuid) throw new Error('no device with that code');

try {
  await boxhub.devices.bind({ uuid, name: 'Room 4' });
} catch (e) {
  // Bound to this application already (an earlier run): carry on. Anything else is an error.
  if (!(e instanceof BoxhubError && e.code === ErrorCode.DEVICE_ALREADY_BOUND)) throw e;
}

const { client } = await boxhub.devices.info({ uuid });
console.log(
  `${client?.name}: ${client?.online ? 'online' : 'offline'}, printer ${client?.printer?.connected ? 'connected' : 'not connected'}`,
);

try {
  await boxhub.control.buzz({ client_uuid: uuid, buzz: [200, 100, 200] });
  console.log('beeped');
} catch (e) {
  if (e instanceof BoxhubError && e.code === ErrorCode.DEVICE_OFFLINE) console.log('the box is offline');
  else throw e;
}
