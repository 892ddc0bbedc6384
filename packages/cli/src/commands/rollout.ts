// `boxhub rollout …`: a release rolled out in waves through the operator API (docs/updates.md,
// "Rollouts").
import { defineCommand, defineGroup, common, intFlag } from '../command.ts';
import { EXIT, UsageError } from '../exit.ts';
import { emit } from '../progress.ts';
import { operatorClient, operatorFlags } from '../operator-client.ts';

interface Rollout {
  id: string;
  version: string;
  state: string;
  wave: number;
  reason?: string;
  waves: Array<{ wave: number; boxes: number; pending: number; sent: number; updated: number; failed: number }>;
}

const text = (r: Rollout) =>
  [
    `rollout ${r.id}: ${r.version}, ${r.state}${r.reason ? ` (${r.reason})` : ''}`,
    ...r.waves.map(
      (w) =>
        `  wave ${w.wave + 1}${w.wave === r.wave && r.state === 'running' ? ' *' : ''}: ${w.boxes} boxes, ${w.updated} updated, ${w.failed} failed, ${w.sent} installing, ${w.pending} pending`,
    ),
  ].join('\n');

const create = defineCommand({
  summary: 'roll a release out to boxes chosen by list, label or percentage',
  usage: '--release ID (--device UUID... | --label L | --percent N) [options]',
  description:
    'Waves double in size (the first is the smallest); after each the rollout pauses, and it\nstops by itself when more than --max-failed percent of a wave failed (docs/updates.md).',
  flags: {
    release: { type: 'string', arg: 'ID', required: true, help: 'the release (boxhub release list)' },
    device: { type: 'string', arg: 'UUID', multiple: true, help: 'a box, by uuid (repeat for more)' },
    label: { type: 'string', arg: 'L', help: 'every box with this label' },
    percent: { type: 'string', arg: 'N', help: 'this share of the fleet, at random, 1-100' },
    waves: { type: 'string', arg: 'N', help: 'number of waves, 1-100 (default 3)' },
    pause: { type: 'string', arg: 'SEC', help: 'pause between waves (default 600)' },
    'wave-timeout': { type: 'string', arg: 'SEC', help: 'how long a wave waits for its boxes (default 3600)' },
    'max-failed': {
      type: 'string',
      arg: 'PCT',
      help: 'stop when more than this percentage of a wave fails (default 10)',
    },
    downgrade: { type: 'boolean', help: 'install even on boxes that run a newer version' },
    ...operatorFlags,
    json: common.json,
  },
  json: '{id, release_id, version, state, wave, waves: [{wave, boxes, pending, sent, updated, failed}], reason?}',
  examples: [
    'boxhub rollout create --release $ID --label school=north --waves 3 --pause 900',
    'boxhub rollout create --release $ID --percent 10 --max-failed 0',
  ],
  async run(ctx) {
    const v = ctx.values;
    const body = {
      release_id: v.release,
      ...(v.device ? { uuids: v.device } : {}),
      ...(v.label ? { label: v.label } : {}),
      ...(v.percent ? { percent: intFlag('percent', v.percent, 1, 100) } : {}),
      ...(v.waves ? { waves: intFlag('waves', v.waves, 1, 100) } : {}),
      ...(v.pause ? { wave_pause_s: intFlag('pause', v.pause, 0, 7 * 86400) } : {}),
      ...(v['wave-timeout'] ? { wave_timeout_s: intFlag('wave-timeout', v['wave-timeout'], 10, 30 * 86400) } : {}),
      ...(v['max-failed'] ? { max_failed_pct: intFlag('max-failed', v['max-failed'], 0, 100) } : {}),
      ...(v.downgrade ? { downgrade: true } : {}),
    };
    if ([v.device, v.label, v.percent].filter(Boolean).length !== 1)
      throw new UsageError('choose the boxes with one of --device, --label, --percent');
    const r = await operatorClient(ctx).post<Rollout>('/api/operator/rollout/create', body);
    emit(ctx.json, r, text(r));
    return EXIT.ok;
  },
});

const info = defineCommand({
  summary: "a rollout's progress, wave by wave",
  usage: 'ID [--json]',
  description: 'GET /api/operator/rollout/info.',
  args: { name: 'ID', min: 1, max: 1 },
  flags: { ...operatorFlags, json: common.json },
  json: '{id, release_id, version, state, wave, waves: [...], reason?}',
  examples: ['boxhub rollout info $ROLLOUT'],
  async run(ctx) {
    const r = await operatorClient(ctx).get<Rollout>(
      `/api/operator/rollout/info?id=${encodeURIComponent(ctx.args[0] ?? '')}`,
    );
    emit(ctx.json, r, text(r));
    return EXIT.ok;
  },
});

const cancel = defineCommand({
  summary: 'end a running rollout: no box is sent the release any more',
  usage: 'ID',
  description:
    'POST /api/operator/rollout/cancel. Boxes that took the release keep it (or roll it back by themselves).',
  args: { name: 'ID', min: 1, max: 1 },
  flags: { ...operatorFlags, json: common.json },
  json: '{canceled: ID}',
  examples: ['boxhub rollout cancel $ROLLOUT'],
  async run(ctx) {
    const id = ctx.args[0] ?? '';
    await operatorClient(ctx).post('/api/operator/rollout/cancel', { id });
    emit(ctx.json, { canceled: id }, `rollout ${id} canceled`);
    return EXIT.ok;
  },
});

export const command = defineGroup({
  summary: 'roll agent releases out in waves (docs/updates.md)',
  description:
    'Through the operator API: --server or $BOXHUB_URL, the token in $BOXHUB_OPERATOR_TOKEN or --token-file.',
  examples: ['boxhub rollout create --release $ID --label school=north', 'boxhub rollout info $ROLLOUT'],
  subcommands: { create, info, cancel },
});
