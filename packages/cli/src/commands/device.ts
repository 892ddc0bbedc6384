// `boxhub device …`: boxes and their secrets, on the database the server uses given the same
// environment (admin-db.ts). Only a hash of a secret is stored; a new one is printed once. With
// MQTT_URL set, the external broker's login is changed too (Mosquitto dynamic security); with
// the embedded broker the running server drops a session whose secret changed within a second.
// The operator API (/api/operator/device/…) does the same over HTTP.
import { common, defineCommand, defineGroup, type Context, type Flags } from '../command.ts';
import { withAdmin, type Admin } from '../admin-db.ts';
import { errnoCode, EXIT, messageOf, UsageError } from '../exit.ts';
import { emit, Progress } from '../progress.ts';
import { listText, pageFlag, pageOf } from '../page-flag.ts';

const ENV =
  "Works on the service's database given the same environment (DATABASE_URL, BOXHUB_DATA_DIR,\nBOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE, MQTT_URL; docs/configuration.md).";

async function admin(ctx: Context<Flags>, work: (a: Admin) => Promise<void>): Promise<number> {
  await withAdmin(new Progress({ json: ctx.json }), work);
  return EXIT.ok;
}

const provision = async (config: Admin['config'], uuid: string, secret: string) =>
  (await import('@boxhub/server/broker/provision.ts')).provisionOnBroker(config, uuid, secret);

/** --device is a uuid or a code; the old --uuid and --code spellings (docs before 0.1) still work. */
const device = { ...common.device, help: 'the box: its uuid or the code on its label' };
const old = {
  uuid: { type: 'string', arg: 'UUID', help: '', deprecatedFor: 'device' },
  code: { type: 'string', arg: 'CODE', help: '', deprecatedFor: 'device' },
} as const satisfies Flags;

async function uuidOf(devices: Admin['devices'], d: string): Promise<string> {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(d) ? d : devices.uuidOf(d);
}

const register = defineCommand({
  summary: 'a new box; prints its uuid and secret (the secret only now)',
  usage: '--code CODE --model MODEL [--json]',
  description: `${ENV}\nGive the uuid and the secret to the box's agent (boxhub agent --device UUID --secret-file FILE).`,
  flags: {
    code: {
      type: 'string',
      arg: 'CODE',
      required: true,
      help: "the code on the box's label (what applications bind it by)",
    },
    model: { type: 'string', arg: 'MODEL', required: true, help: 'the box model, e.g. BX-1' },
    json: common.json,
  },
  json: '{uuid, code, secret}',
  examples: [
    'boxhub device register --code BX0042 --model BX-1',
    'boxhub device register --code BX0042 --model BX-1 --json | jq -r .secret > secret',
  ],
  run: (ctx) =>
    admin(ctx, async ({ config, devices }) => {
      const d = await devices.register({ code: ctx.values.code, model: ctx.values.model }, (x) =>
        provision(config, x.uuid, x.secret),
      );
      emit(
        ctx.json,
        { uuid: d.uuid, code: d.code, secret: d.secret },
        `device ${d.code} (${d.model})\nuuid:   ${d.uuid}\nsecret: ${d.secret}\nThe secret is shown only now; give it to the box's agent.`,
      );
    }),
});

const rotateSecret = defineCommand({
  summary: 'a new secret for a box (shown once); the old one stops working',
  usage: '--device DEVICE [--json]',
  description: ENV,
  flags: { device, json: common.json, ...old },
  json: '{uuid, code, secret}',
  examples: ['boxhub device rotate-secret --device BX0042', 'boxhub device rotate-secret --device $UUID --json'],
  run: (ctx) =>
    admin(ctx, async ({ config, devices }) => {
      const uuid = await uuidOf(devices, ctx.values.device);
      const d = await devices.rotateSecret(uuid, { provision: (x) => provision(config, x.uuid, x.secret) });
      emit(
        ctx.json,
        { uuid: d.uuid, code: d.code, secret: d.secret },
        `device ${d.code} (${d.uuid})\nnew secret: ${d.secret}\nThe old secret no longer works. Shown only now; give it to the box's agent.`,
      );
    }),
});

const revoke = defineCommand({
  summary: 'no login of the box works until its secret is rotated',
  usage: '--device DEVICE [--json]',
  description: ENV,
  flags: { device, json: common.json, ...old },
  json: '{revoked: UUID}',
  examples: ['boxhub device revoke --device BX0042'],
  run: (ctx) =>
    admin(ctx, async ({ config, devices }) => {
      const uuid = await uuidOf(devices, ctx.values.device);
      const { deprovisionOnBroker } = await import('@boxhub/server/broker/provision.ts');
      await devices.revokeSecret(uuid, { deprovision: (u) => deprovisionOnBroker(config, u) });
      emit(
        ctx.json,
        { revoked: uuid },
        `device ${uuid}: secret revoked; it cannot log in until its secret is rotated.`,
      );
    }),
});

const list = defineCommand({
  summary: 'every box, 100 a page: online or not, the application it is bound to, a revoked secret',
  usage: '[--page N] [--json]',
  description: ENV,
  flags: { page: pageFlag, json: common.json },
  json: '{page, page_size, total, devices: [{client, model, app_id, app_name, registered_at, secret_revoked}]} (as GET /api/operator/device/list; client as GET /api/client/info)',
  examples: [
    'boxhub device list',
    "boxhub device list --json | jq -r '.devices[] | select(.client.online) | .client.code'",
  ],
  run: (ctx) =>
    admin(ctx, async ({ devices }) => {
      const l = await devices.listAll(pageOf(ctx.values.page));
      emit(
        ctx.json,
        l,
        listText(
          l,
          l.devices.map(
            (d) =>
              `${d.client.code}  ${d.client.uuid}  ${d.model}  ${d.client.online ? 'online ' : 'offline'}  ${d.app_id ? `bound to ${d.app_name ?? d.app_id}` : 'not bound'}${d.secret_revoked ? '  SECRET REVOKED' : ''}`,
          ),
          'box(es)',
        ),
      );
    }),
});

const importList = defineCommand({
  summary: 'register boxes by the hundred from a CSV or JSON list; their secrets go to a file',
  usage: 'FILE --out SECRETS.csv [--json]',
  description: `${ENV}\nFILE: CSV with a header code,model,labels (labels separated by spaces or ;) or JSON, an array\nof {code, model, labels}. Each new box's uuid and secret go to --out (mode 0600, never\noverwritten: the secrets are shown only now) for the factory image. Idempotent: a code\nregistered before is listed as exists, without a secret, and registered nothing twice\n(docs/fleet.md).`,
  args: { name: 'FILE', min: 1, max: 1 },
  flags: {
    out: { type: 'string', arg: 'FILE', required: true, help: 'where the secrets go: CSV code,uuid,secret,status' },
    json: common.json,
  },
  json: '{devices: [{code, uuid, status}], out} (secrets only in --out)',
  examples: ['boxhub device import boxes.csv --out secrets-2026-11.csv'],
  run: (ctx) =>
    admin(ctx, async ({ config, fleet }) => {
      const { appendFileSync, readFileSync, writeFileSync } = await import('node:fs');
      const { parseBoxList, secretsCsv, secretsLine } = await import('../device-list-file.ts');
      const file = ctx.args[0] ?? '';
      const out = ctx.values.out ?? '';
      let list;
      try {
        list = parseBoxList(readFileSync(file, 'utf8'), file);
      } catch (e) {
        throw new UsageError(messageOf(e));
      }
      try {
        writeFileSync(out, secretsCsv([]), { mode: 0o600, flag: 'wx' });
      } catch (e) {
        throw new UsageError(
          `--out ${out}: ${errnoCode(e) === 'EEXIST' ? 'exists already (it may hold secrets shown only once): choose another file' : messageOf(e)}`,
        );
      }
      // Each line as soon as its box is registered: an import that fails half-way keeps the secrets made.
      // One broker connection for the whole list (provision.ts withProvisioner).
      const { withProvisioner } = await import('@boxhub/server/broker/provision.ts');
      const r = await withProvisioner(config, (provisionOne) =>
        fleet.bulkRegister(
          { devices: list },
          (x) => provisionOne(x.uuid, x.secret),
          (d) => appendFileSync(out, secretsLine(d)),
        ),
      );
      const made = r.devices.filter((d) => d.status === 'registered').length;
      emit(
        ctx.json,
        { devices: r.devices.map((d) => ({ code: d.code, uuid: d.uuid, status: d.status })), out },
        `${made} box(es) registered, ${r.devices.length - made} registered before (no new secret)\nsecrets: ${out} (shown only there; give each box its line)`,
      );
    }),
});

export const command = defineGroup({
  summary: "boxes and their secrets (on the service's database)",
  description: ENV,
  examples: ['boxhub device register --code BX0042 --model BX-1', 'boxhub device rotate-secret --device BX0042'],
  subcommands: { register, import: importList, list, 'rotate-secret': rotateSecret, revoke },
});
