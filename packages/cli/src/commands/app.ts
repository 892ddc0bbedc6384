// `boxhub app …`: applications and their API keys, on the database the server uses given the
// same environment (admin-db.ts). The operator API (/api/operator/app/…) does the same over HTTP.
import { common, defineCommand, defineGroup, type Context, type Flags } from '../command.ts';
import { withAdmin, type Admin } from '../admin-db.ts';
import { EXIT } from '../exit.ts';
import { listText, pageFlag, pageOf } from '../page-flag.ts';
import { emit, Progress } from '../progress.ts';

const when = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

/** Runs `work` on the server's database, with the progress of opening it. */
async function admin(ctx: Context<Flags>, work: (a: Admin, progress: Progress) => Promise<void>): Promise<number> {
  const progress = new Progress({ json: ctx.json });
  await withAdmin(progress, (a) => work(a, progress));
  return EXIT.ok;
}

const ENV =
  "Works on the service's database given the same environment (DATABASE_URL, BOXHUB_DATA_DIR,\nBOXHUB_SECRET_KEY or BOXHUB_SECRET_KEY_FILE; docs/configuration.md).";

const create = defineCommand({
  summary: 'a new application with one API key ("default") and its callback secret',
  usage: '--name NAME [--ess] [--json]',
  description: `${ENV}\nThe API key and the callback secret are shown only now.`,
  flags: {
    name: { type: 'string', arg: 'NAME', required: true, help: "the application's name (a school, a product)" },
    ess: { type: 'boolean', help: 'may use feedback-card recognition' },
    json: common.json,
  },
  json: '{id, api_key, key_id, callback_secret}',
  examples: [
    'boxhub app create --name "Springfield School" --ess',
    'boxhub app create --name Test --json | jq -r .api_key > api.key',
  ],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      const a = await applications.create({ name: ctx.values.name, ess: ctx.values.ess === true });
      emit(
        ctx.json,
        { id: a.id, api_key: a.api_key, key_id: a.key_id, callback_secret: a.callback_secret },
        `application ${a.name} (${a.id})\napi key:         ${a.api_key}  (key id ${a.key_id}, "default")\ncallback secret: ${a.callback_secret}\nfeedback cards:  ${a.ess ? 'allowed' : 'not allowed'}\nThe API key and the secret are shown only now; store them.`,
      );
    }),
});

const list = defineCommand({
  summary: 'every application, newest first, 50 a page: keys in use, boxes bound',
  usage: '[--page N] [--json]',
  description: ENV,
  flags: { page: pageFlag, json: common.json },
  json: '{page, page_size, total, applications: [{id, name, ess, created_at, active_keys, devices}]} (as GET /api/operator/app/list)',
  examples: ['boxhub app list', 'boxhub app list --json | jq -r \'.applications[] | .id + " " + .name\''],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      const l = await applications.list(pageOf(ctx.values.page));
      emit(
        ctx.json,
        l,
        listText(
          l,
          l.applications.map(
            (a) =>
              `${a.id}  ${a.name}  created ${when(a.created_at)}  ${a.active_keys} key(s)  ${a.devices} box(es)${a.ess ? '  feedback cards' : ''}`,
          ),
          'application(s)',
        ),
      );
    }),
});

const app = {
  type: 'string',
  arg: 'APP_ID',
  required: true,
  help: 'the application (app create prints its id)',
} as const;
const key = { type: 'string', arg: 'KEY_ID', required: true, help: "the key's id (app key list shows them)" } as const;

const keyList = defineCommand({
  summary: "an application's keys: name, prefix, created, last used, revoked",
  usage: '--app APP_ID [--json]',
  description: ENV,
  flags: { app, json: common.json },
  json: '{keys: [{id, name, prefix, created_at, last_used_at, revoked_at}]} (times in ms since 1970)',
  examples: ['boxhub app key list --app $APP_ID'],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      const keys = await applications.listKeys(ctx.values.app);
      emit(
        ctx.json,
        { keys },
        keys
          .map(
            (k) =>
              `${k.id}  ${k.name.padEnd(16)} ${k.prefix}…  created ${when(k.created_at)}  last used ${when(k.last_used_at)}${k.revoked_at ? `  REVOKED ${when(k.revoked_at)}` : ''}`,
          )
          .join('\n') || '(no keys)',
      );
    }),
});

const keyCreate = defineCommand({
  summary: 'another API key for an application (shown once)',
  usage: '--app APP_ID --name NAME [--json]',
  description: ENV,
  flags: {
    app,
    name: { type: 'string', arg: 'NAME', required: true, help: 'what the key is for ("grading server")' },
    json: common.json,
  },
  json: '{id, app_id, name, api_key}',
  examples: ['boxhub app key create --app $APP_ID --name "grading server"'],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      const k = await applications.createKey(ctx.values.app, ctx.values.name);
      emit(ctx.json, k, `api key: ${k.api_key}  (key id ${k.id}, "${k.name}")\nShown only now; store it.`);
    }),
});

const keyRotate = defineCommand({
  summary: 'a new key with the same name; the old one stops working at once',
  usage: '--key KEY_ID [--json]',
  description: ENV,
  flags: { key, json: common.json },
  json: '{id, app_id, name, api_key} (the new key)',
  examples: ['boxhub app key rotate --key $KEY_ID'],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      const k = await applications.rotateKey(ctx.values.key);
      emit(
        ctx.json,
        k,
        `api key: ${k.api_key}  (key id ${k.id}, "${k.name}"); ${ctx.values.key} is revoked.\nShown only now; store it.`,
      );
    }),
});

const keyRevoke = defineCommand({
  summary: 'the key stops working at once, on every node',
  usage: '--key KEY_ID [--json]',
  description: ENV,
  flags: { key, json: common.json },
  json: '{revoked: KEY_ID}',
  examples: ['boxhub app key revoke --key $KEY_ID'],
  run: (ctx) =>
    admin(ctx, async ({ applications }) => {
      await applications.revokeKey(ctx.values.key);
      emit(ctx.json, { revoked: ctx.values.key }, `${ctx.values.key} is revoked.`);
    }),
});

export const command = defineGroup({
  summary: "applications and their API keys (on the service's database)",
  description: ENV,
  examples: ['boxhub app create --name "Springfield School" --ess', 'boxhub app key list --app $APP_ID'],
  subcommands: {
    create,
    list,
    key: defineGroup({
      summary: "an application's API keys: list, create, rotate, revoke",
      description: ENV,
      examples: ['boxhub app key list --app $APP_ID', 'boxhub app key rotate --key $KEY_ID'],
      subcommands: { list: keyList, create: keyCreate, rotate: keyRotate, revoke: keyRevoke },
    }),
  },
});
