// `boxhub device register --code CODE --model MODEL [--json]`: provisions a box. Prints the
// secret the agent logs in with; only its hash is stored. With MQTT_URL set, the box also gets
// its login on the external broker.
import { ApiError } from '@boxhub/protocol';
import { loadConfig, DeviceService, createRepositories, migrate, openConfiguredDb, systemClock } from '@boxhub/server';
import { guard, parse, UsageError } from '../args.ts';

export const summary = 'provision a box: device register --code CODE --model MODEL [--json]';

export function run(argv: string[]): Promise<number> {
  return guard(async () => {
    const { values, positionals } = parse(argv, {
      code: { type: 'string' }, model: { type: 'string' }, json: { type: 'boolean', default: false },
    }, true);
    if (positionals[0] !== 'register' || positionals.length !== 1) throw new UsageError(`usage: boxhub ${summary.split(': ')[1]}`);
    if (!values.code || !values.model) throw new UsageError('--code and --model are required');
    const config = loadConfig();
    const db = await openConfiguredDb(config);
    try {
      await migrate(db);
      const devices = new DeviceService(createRepositories(db).devices, systemClock);
      const { provisionOnBroker } = await import('@boxhub/server/broker/provision.ts');
      const d = await devices.register({ code: values.code, model: values.model }, (x) => provisionOnBroker(config, x.uuid, x.secret));
      if (values.json) process.stdout.write(`${JSON.stringify({ uuid: d.uuid, code: d.code, secret: d.secret })}\n`);
      else process.stdout.write(`device ${d.code} (${d.model})\nuuid:   ${d.uuid}\nsecret: ${d.secret}\nThe secret is shown only now; give it to the box's agent.\n`);
      return 0;
    } catch (e) {
      if (e instanceof ApiError) throw new UsageError(e.message);
      throw e;
    } finally {
      await db.close();
    }
  });
}
