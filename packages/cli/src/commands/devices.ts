// `boxhub devices [--page N]`: the boxes bound to this application, 100 a page, as
// GET /api/client/list gives them (docs/cli.md, "boxhub devices").
import type { Device } from '@boxhub/sdk';
import { common, defineCommand } from '../command.ts';
import { connect, connectionFlags } from '../connection.ts';
import { EXIT } from '../exit.ts';
import { listText, pageFlag, pageOf } from '../page-flag.ts';
import { emit } from '../progress.ts';

/** One box on one line: code, uuid, name, online, and what it has connected. */
export function clientLine(c: Device): string {
  const parts = (['scanner', 'printer'] as const).map(
    (k) => `${k} ${c[k]?.connected ? (c[k]?.model ?? 'connected') : 'none'}`,
  );
  return [c.code ?? '-', c.uuid ?? '-', JSON.stringify(c.name ?? ''), c.online ? 'online ' : 'offline', ...parts].join(
    '  ',
  );
}

export const command = defineCommand({
  summary: 'the boxes bound to this application, 100 a page',
  usage: '[--page N] [--json]',
  description:
    'Lists the boxes bound to the application of the API key (GET /api/client/list), 100 a page:\ncode, uuid, name, online or not, scanner and printer.',
  flags: { page: pageFlag, ...connectionFlags, json: common.json },
  json: '{page, page_size, total, clients: [{uuid, code, name, online, …}]} (as GET /api/client/list)',
  examples: [
    'boxhub devices',
    'boxhub devices --page 2',
    "boxhub devices --json | jq -r '.clients[] | select(.online) | .code'",
  ],
  async run(ctx) {
    const page = pageOf(ctx.values.page);
    const boxhub = await connect(ctx);
    const l = await boxhub.devices.list({ page });
    emit(ctx.json, l, listText(l, l.clients.map(clientLine), 'bound box(es)'));
    return EXIT.ok;
  },
});
