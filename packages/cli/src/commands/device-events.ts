// `boxhub device-events [URL | --off]`: where the application's device events go
// (device.online, device.offline, device.printer_state, device.scanner_state; docs/callbacks.md,
// "Device events"). Without an argument it shows the current setting.
import { common, defineCommand } from '../command.ts';
import { connect, connectionFlags } from '../connection.ts';
import { EXIT, UsageError } from '../exit.ts';
import { emit } from '../progress.ts';

export const command = defineCommand({
  summary: 'where device events go: a box online/offline, printer and scanner state',
  usage: '[URL | --off] [options]',
  description:
    "Sets the URL this application's device events are sent to (signed and retried like every\ncallback), or with --off stops them. Without URL or --off it shows where they go now. A change\nis reported once it has held for the settle time the service shows (docs/callbacks.md).",
  args: { name: 'URL', min: 0, max: 1 },
  flags: {
    off: { type: 'boolean', help: 'stop sending device events' },
    ...connectionFlags,
    json: common.json,
  },
  json: '{callback_url?, settle_ms}',
  examples: [
    'boxhub device-events https://school.example.org/boxhub/devices',
    'boxhub device-events',
    'boxhub device-events --off',
  ],
  async run(ctx) {
    const url = ctx.args[0];
    if (url !== undefined && ctx.values.off) throw new UsageError('give a URL or --off, not both');
    const boxhub = await connect(ctx);
    const setting = ctx.values.off
      ? await boxhub.devices.setEventCallback({ callback_url: '' })
      : url !== undefined
        ? await boxhub.devices.setEventCallback({ callback_url: url })
        : await boxhub.devices.eventCallback();
    const settle = `${Math.round(setting.settle_ms / 1000)} s`;
    emit(
      ctx.json,
      setting,
      setting.callback_url
        ? `device events go to ${setting.callback_url} (a change is reported once it has held ${settle})`
        : 'no device events are sent (give a URL to start them)',
    );
    return EXIT.ok;
  },
});
