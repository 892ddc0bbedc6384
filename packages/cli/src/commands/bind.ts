// `boxhub bind --device DEVICE --name NAME`: binds a box to the application whose API key the
// command uses (POST /api/client/bind), by its uuid or the code on its label; then the box is
// the application's to scan and print on (docs/cli.md, "boxhub bind").
import { common, defineCommand } from '../command.ts';
import { connect, connectionFlags, deviceUuid } from '../connection.ts';
import { EXIT } from '../exit.ts';
import { emit } from '../progress.ts';
import { clientLine } from './devices.ts';

export const command = defineCommand({
  summary: 'bind a box to this application (by its uuid or the code on its label)',
  usage: '--device DEVICE --name NAME [--remark TEXT] [--json]',
  description:
    'Binds the box to the application of the API key (POST /api/client/bind), then shows it as\nGET /api/client/info does. A box bound to another application is refused (error 30003): that\napplication unbinds it first.',
  flags: {
    device: common.device,
    name: {
      type: 'string',
      arg: 'NAME',
      required: true,
      help: 'your name for the box, 1-100 characters (e.g. the room it is in)',
    },
    remark: { type: 'string', arg: 'TEXT', help: 'a remark, at most 500 characters' },
    ...connectionFlags,
    json: common.json,
  },
  json: '{client} (as GET /api/client/info)',
  examples: [
    'boxhub bind --device BX0042 --name "Room 12"',
    'boxhub bind --device BX0042 --name "Room 12" --json | jq -r .client.uuid',
  ],
  async run(ctx) {
    const boxhub = await connect(ctx);
    const uuid = await deviceUuid(boxhub, ctx.values.device);
    await boxhub.devices.bind({
      uuid,
      name: ctx.values.name,
      ...(ctx.values.remark !== undefined ? { remark: ctx.values.remark } : {}),
    });
    const { client } = await boxhub.devices.info({ uuid });
    emit(ctx.json, { client }, `bound: ${client ? clientLine(client) : uuid}`);
    return EXIT.ok;
  },
});
