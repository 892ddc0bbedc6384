// Drops embedded-broker sessions whose credentials changed under them. The embedded broker
// checks a box's secret against the database when it logs in; a secret rotated or revoked
// afterwards must also end the session already open. The server's own operator API drops it at
// once (DeviceService hooks); a change made by another process (the CLI, another node on the
// same database) is found here: every tick on PostgreSQL, and on SQLite whenever its
// data_version says another connection wrote.

export interface SessionWatchOptions {
  sessions: () => string[];
  disconnect: (uuid: string) => void;
  /** Each box's current secret hash (the devices repository is one; the broker sits below the modules). */
  devices: { secretHashes(uuids: string[]): Promise<Map<string, string>> };
  /** SQLite only: changes when another connection committed; undefined = check every tick. */
  dataVersion?: () => number;
  onDropped?: (uuid: string) => void;
  onError?: (err: unknown) => void;
}

export class SessionWatch {
  private readonly o: SessionWatchOptions;
  /** The secret hash each open session logged in with. */
  private readonly logins = new Map<string, string>();
  private seenVersion: number | undefined;
  private running = false;
  constructor(o: SessionWatchOptions) {
    this.o = o;
  }

  /** Called on each successful login. */
  loggedIn(uuid: string, secretHash: string): void {
    this.logins.set(uuid, secretHash);
  }

  /** One pass: sessions whose device is gone or whose secret hash changed are dropped. */
  async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // Inside the try: it runs on a timer, so a database that is closed or failing (its
      // data_version read throws) is reported through onError, never an unhandled rejection.
      if (this.o.dataVersion) {
        const v = this.o.dataVersion();
        if (v === this.seenVersion) return;
        this.seenVersion = v;
      }
      const open = new Set(this.o.sessions());
      for (const uuid of this.logins.keys()) if (!open.has(uuid)) this.logins.delete(uuid);
      const ids = [...this.logins.keys()];
      if (ids.length === 0) return;
      const current = await this.o.devices.secretHashes(ids);
      for (const uuid of ids) {
        if (current.get(uuid) === this.logins.get(uuid)) continue;
        this.logins.delete(uuid);
        this.o.disconnect(uuid);
        this.o.onDropped?.(uuid);
      }
    } catch (e) {
      this.o.onError?.(e);
    } finally {
      this.running = false;
    }
  }
}
