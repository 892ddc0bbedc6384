// The fleet's figures on /metrics (docs/fleet.md, "Metrics"): the same ones the console's fleet
// page shows, read from the database when Prometheus scrapes (every node answers the same).
import { Gauge, type Registry } from 'prom-client';
import type { FleetService } from './service.ts';
import type { RolloutService } from '../rollouts/service.ts';

export function fleetMetrics(registry: Registry, fleet: FleetService, rollouts: RolloutService): void {
  const collect = () => read();
  const boxes = new Gauge({
    name: 'boxhub_fleet_boxes',
    help: 'Registered boxes by state (online, offline, printer_trouble, scanner_trouble)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect,
  });
  const versions = new Gauge({
    name: 'boxhub_fleet_boxes_by_version',
    help: 'Registered boxes by the agent version they last reported (unknown: none yet)',
    labelNames: ['version'] as const,
    registers: [registry],
    collect,
  });
  const labels = new Gauge({
    name: 'boxhub_fleet_boxes_by_label',
    help: 'Registered boxes with a label, and how many of them are online',
    labelNames: ['label', 'online'] as const,
    registers: [registry],
    collect,
  });
  const waves = new Gauge({
    name: 'boxhub_rollout_boxes',
    help: 'Boxes of the 50 newest rollouts by wave and state (pending, sent, updated, failed)',
    labelNames: ['rollout', 'version', 'rollout_state', 'wave', 'state'] as const,
    registers: [registry],
    async collect() {
      waves.reset();
      for (const r of await rollouts.list()) {
        for (const w of r.waves) {
          for (const state of ['pending', 'sent', 'updated', 'failed'] as const) {
            waves.set(
              { rollout: r.id, version: r.version, rollout_state: r.state, wave: String(w.wave + 1), state },
              w[state],
            );
          }
        }
      }
    },
  });
  // One read serves the three fleet gauges of a scrape: each collect() asks for it, the first reads.
  let reading: Promise<void> | undefined;
  function read(): Promise<void> {
    reading ??= (async () => {
      try {
        const s = fleet.summary(await fleet.boxes());
        boxes.reset();
        versions.reset();
        labels.reset();
        boxes.set({ state: 'online' }, s.online);
        boxes.set({ state: 'offline' }, s.offline);
        boxes.set({ state: 'printer_trouble' }, s.printer_trouble);
        boxes.set({ state: 'scanner_trouble' }, s.scanner_trouble);
        for (const v of s.versions) versions.set({ version: v.version }, v.boxes);
        for (const l of s.labels) {
          labels.set({ label: l.label, online: 'true' }, l.online);
          labels.set({ label: l.label, online: 'false' }, l.boxes - l.online);
        }
      } finally {
        setImmediate(() => {
          reading = undefined;
        });
      }
    })();
    return reading;
  }
}
