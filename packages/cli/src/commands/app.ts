// `boxhub app create --name NAME [--ess] [--json]`: creates an application on the database the
// server uses given the same environment (DATABASE_URL / BOXHUB_DATA_DIR).
import { loadConfig, ApplicationService, createRepositories, migrate, openConfiguredDb, systemClock } from '@boxhub/server';
import { guard, parse, UsageError } from '../args.ts';

export const summary = 'create an application: app create --name NAME [--ess] [--json]';

export function run(argv: string[]): Promise<number> {
  return guard(async () => {
    const { values, positionals } = parse(argv, {
      name: { type: 'string' }, ess: { type: 'boolean', default: false }, json: { type: 'boolean', default: false },
    }, true);
    if (positionals[0] !== 'create' || positionals.length !== 1) throw new UsageError(`usage: boxhub ${summary.split(': ')[1]}`);
    if (!values.name?.trim()) throw new UsageError('--name is required');
    const config = loadConfig();
    const db = await openConfiguredDb(config);
    try {
      await migrate(db);
      const apps = new ApplicationService(createRepositories(db).applications, systemClock);
      const a = await apps.create({ name: values.name, ess: values.ess });
      if (values.json) process.stdout.write(`${JSON.stringify({ id: a.id, api_key: a.api_key, callback_secret: a.callback_secret })}\n`);
      else process.stdout.write(`application ${a.name} (${a.id})\napi key:         ${a.api_key}\ncallback secret: ${a.callback_secret}\nfeedback cards:  ${a.ess ? 'allowed' : 'not allowed'}\nThe API key is shown only now; store it.\n`);
      return 0;
    } finally {
      await db.close();
    }
  });
}
