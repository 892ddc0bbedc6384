// `boxhub unbind --device DEVICE`: the box is no longer this application's
// (POST /api/client/unbind); its tasks stay readable until they expire (docs/cli.md, "boxhub unbind").
import { common, defineCommand } from '../command.ts';
import { connect, connectionFlags, deviceUuid } from '../connection.ts';
import { EXIT } from '../exit.ts';
import { emit } from '../progress.ts';

export const command = defineCommand({
  summary: 'unbind a box from this application',
  usage: '--device DEVICE [--json]',
  description:
    'Unbinds the box from the application of the API key (POST /api/client/unbind): another\napplication can then bind it. A box that is not bound to this application is refused (error 30002).',
  flags: { device: common.device, ...connectionFlags, json: common.json },
  json: '{unbound: UUID}',
  examples: ['boxhub unbind --device BX0042', 'boxhub unbind --device 0b6f…-uuid --json'],
  async run(ctx) {
    const boxhub = await connect(ctx);
    const uuid = await deviceUuid(boxhub, ctx.values.device);
    await boxhub.devices.unbind({ uuid });
    emit(ctx.json, { unbound: uuid }, `unbound: ${uuid}`);
    return EXIT.ok;
  },
});
