// Agent releases (docs/updates.md): uploaded by the operator already signed (the signing key never
// reaches the server), checked against their manifest, kept in the blob store, and handed to
// boxes as `agent.update` commands with a signed download URL. The box checks the signature with
// the release key it was provisioned with; the server only checks that the bytes are the ones
// the manifest names.
import { randomUUID } from 'node:crypto';
import { ApiError, type Ack, type api } from '@boxhub/protocol';
import { sha256Hex, type AgentUpdateParams } from '@boxhub/protocol/release.ts';
import type { Kysely } from 'kysely';
import type { BoxGateway } from '../../box-link/gateway.ts';
import type { Clock } from '../../clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { Database, ReleasesTable } from '../../db/schema.ts';
import type { BlobStore } from '../../storage/blob-store.ts';

/** How long a box may take to download a release (the URL it gets). */
export const RELEASE_URL_TTL_MS = 24 * 3600_000;

export type ReleaseRow = ReleasesTable;

export class ReleaseService {
  private readonly db: Kysely<Database>;
  private readonly blobs: BlobStore;
  private readonly gateway: BoxGateway;
  private readonly clock: Clock;
  constructor(d: { db: Kysely<Database>; blobs: BlobStore; gateway: BoxGateway; clock: Clock }) {
    this.db = d.db;
    this.blobs = d.blobs;
    this.gateway = d.gateway;
    this.clock = d.clock;
  }

  async upload(body: api.ReleaseUploadBody): Promise<api.ReleaseView> {
    const m = body.manifest;
    const bytes = Buffer.from(body.package, 'base64');
    if (bytes.length !== m.size)
      throw new ApiError('RELEASE_INVALID', `the package is ${bytes.length} bytes, the manifest says ${m.size}`);
    const hash = sha256Hex(bytes);
    if (hash !== m.sha256)
      throw new ApiError('RELEASE_INVALID', `the package's SHA-256 is ${hash}, the manifest says ${m.sha256}`);
    if (Buffer.from(body.signature, 'base64').length !== 64)
      throw new ApiError('RELEASE_INVALID', 'the signature is not a base64 Ed25519 signature (64 bytes)');
    const exists = () => new ApiError('RELEASE_EXISTS', `release ${m.version} for ${m.platform} was uploaded before`);
    if (await this.findVersion(m.version, m.platform)) throw exists();
    const id = randomUUID();
    await this.blobs.put(blobKey(id), bytes, { contentType: 'application/gzip' });
    const row: ReleaseRow = { id, ...m, signature: body.signature, created_at: this.clock.now() };
    try {
      await this.db.insertInto('releases').values(row).execute();
    } catch (e) {
      await this.blobs.deletePrefix(blobKey(id));
      if (isUniqueViolation(e)) throw exists();
      throw e;
    }
    return view(row);
  }

  async list(): Promise<api.ReleaseView[]> {
    const rows = await this.db.selectFrom('releases').selectAll().orderBy('created_at', 'desc').limit(200).execute();
    return rows.map(view);
  }

  async get(id: string): Promise<ReleaseRow> {
    const r = await this.db.selectFrom('releases').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new ApiError('NOT_FOUND', `no release with id '${id}'`);
    return r;
  }

  private findVersion(version: string, platform: string): Promise<ReleaseRow | undefined> {
    return this.db
      .selectFrom('releases')
      .selectAll()
      .where('version', '=', version)
      .where('platform', '=', platform)
      .executeTakeFirst();
  }

  /** The `agent.update` command's parameters for this release. */
  async updateParams(r: ReleaseRow, downgrade: boolean): Promise<AgentUpdateParams> {
    const url = await this.blobs.downloadUrl(blobKey(r.id), {
      fileName: `boxhub-agent-${r.version}.tgz`,
      contentType: 'application/gzip',
      expiresInMs: RELEASE_URL_TTL_MS,
    });
    return {
      release: r.id,
      url,
      signature: r.signature,
      manifest: { version: r.version, platform: r.platform, size: Number(r.size), sha256: r.sha256, entry: r.entry },
      ...(downgrade ? { downgrade: true } : {}),
    };
  }

  /** Sends one box the release; resolves with its answer (the ack: accepted, or refused and why). */
  async send(uuid: string, r: ReleaseRow, downgrade: boolean, timeoutMs?: number): Promise<Ack> {
    return this.gateway.command(uuid, 'agent.update', await this.updateParams(r, downgrade), timeoutMs);
  }

  /** The operator's update of one box, outside any rollout. */
  async updateDevice(body: { uuid: string; release_id: string; downgrade?: boolean | undefined }): Promise<void> {
    const d = await this.db
      .selectFrom('devices')
      .select(['uuid', 'online'])
      .where('uuid', '=', body.uuid)
      .executeTakeFirst();
    if (!d) throw new ApiError('DEVICE_NOT_FOUND', `no device with uuid '${body.uuid}'`);
    if (d.online !== 1)
      throw new ApiError(
        'DEVICE_OFFLINE',
        'the box is offline: roll the release out to it instead, and it takes it when it comes back',
      );
    const ack = await this.send(body.uuid, await this.get(body.release_id), body.downgrade ?? false);
    if (!ack.ok)
      throw new ApiError(
        'DEVICE_REJECTED',
        `the box refused the release: ${ack.message ?? ack.reason ?? 'no reason given'}`,
      );
  }
}

const blobKey = (id: string) => `releases/${id}.tgz`;

function view(r: ReleaseRow): api.ReleaseView {
  return {
    id: r.id,
    version: r.version,
    platform: r.platform,
    size: Number(r.size),
    sha256: r.sha256,
    entry: r.entry,
    created_at: Number(r.created_at),
  };
}
