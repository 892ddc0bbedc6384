import type { Kysely } from 'kysely';
import type { Application, Database, NewApplication } from '../../db/schema.ts';

export class ApplicationRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) { this.db = db; }

  async insert(app: NewApplication): Promise<void> {
    await this.db.insertInto('applications').values(app).execute();
  }

  findByKeyHash(hash: string): Promise<Application | undefined> {
    return this.db.selectFrom('applications').selectAll().where('api_key_hash', '=', hash).executeTakeFirst();
  }

  findById(id: string): Promise<Application | undefined> {
    return this.db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByName(name: string): Promise<Application | undefined> {
    return this.db.selectFrom('applications').selectAll().where('name', '=', name).executeTakeFirst();
  }
}
