// Remote device control (spec: "Device control"). Each operation needs a bound, online box;
// the three inkjet operations also need an inkjet printer that supports strict mode, and the
// heavy ink flush is refused within 24 hours of the previous one (spec: "Limits").
import { ApiError, api, type Ack, type CommandType } from '@boxhub/protocol';
import type { Clock } from '../../clock.ts';
import type { BoxGateway } from '../../box-link/gateway.ts';
import type { DeviceRow } from '../../db/schema.ts';
import type { DeviceRepository } from '../devices/repository.ts';
import type { DeviceService } from '../devices/service.ts';
import { parseState } from '../devices/view.ts';

export const INK_FLUSH_WINDOW_MS = 24 * 60 * 60 * 1000;
type InkjetOp = 'head_clean' | 'power_ink_flush' | 'nozzle_check';

export class ControlService {
  private readonly devices: DeviceService;
  private readonly repo: DeviceRepository;
  private readonly gateway: BoxGateway;
  private readonly clock: Clock;

  constructor(devices: DeviceService, repo: DeviceRepository, gateway: BoxGateway, clock: Clock) {
    this.devices = devices; this.repo = repo; this.gateway = gateway; this.clock = clock;
  }

  async buzz(appId: string, uuid: string, buzz: number[], gap: number | undefined): Promise<void> {
    const d = await this.online(appId, uuid);
    await this.send(d, 'buzz', { buzz, gap: gap ?? api.BUZZ_LIMITS.defaultGapMs });
  }

  async reboot(appId: string, uuid: string): Promise<void> {
    await this.send(await this.online(appId, uuid), 'reboot', {});
  }

  async inkjet(appId: string, uuid: string, op: InkjetOp): Promise<void> {
    const d = await this.online(appId, uuid);
    const printer = parseState(d)?.printer;
    if (!printer?.connected) throw new ApiError('PRINTER_NOT_CONNECTED', `${op} needs a connected printer`);
    if (printer.kind !== 'inkjet' || !printer.strict) {
      throw new ApiError('DEVICE_NOT_SUPPORTED', `${op} is only for inkjet printers that support strict mode; this printer is ${printer.kind ?? 'of unknown kind'}${printer.strict ? '' : ' without strict mode'}`);
    }
    if (!printer.maintenance?.includes(op)) {
      throw new ApiError('DEVICE_NOT_SUPPORTED', `this printer (${[printer.make, printer.model].filter(Boolean).join(' ') || 'unknown model'}) does not support ${op}`);
    }
    if (op !== 'power_ink_flush') { await this.send(d, op, {}); return; }

    const now = this.clock.now();
    const claim = await this.repo.claimInkFlush(d.uuid, now, now - INK_FLUSH_WINDOW_MS);
    if (!claim.ok) {
      const next = new Date(claim.last + INK_FLUSH_WINDOW_MS).toISOString();
      throw new ApiError('DEVICE_COOLDOWN', `power ink flush is allowed once per 24 hours; the next is allowed after ${next}`, { next_allowed_at: claim.last + INK_FLUSH_WINDOW_MS });
    }
    try {
      await this.send(d, op, {});
    } catch (e) {
      // The box never flushed: the window stays open for a retry.
      await this.repo.releaseInkFlush(d.uuid, now, claim.previous);
      throw e;
    }
  }

  private async online(appId: string, uuid: string): Promise<DeviceRow> {
    const d = await this.devices.bound(appId, uuid);
    if (d.online !== 1) throw new ApiError('DEVICE_OFFLINE', 'device is offline');
    return d;
  }

  private async send(d: DeviceRow, type: CommandType, params: Record<string, unknown>): Promise<void> {
    const ack = await this.gateway.command(d.uuid, type, params);
    if (!ack.ok) throw ackError(type, ack);
  }
}

function ackError(type: string, ack: Ack): ApiError {
  const detail = ack.message ? `: ${ack.message}` : '';
  switch (ack.reason) {
    case 'not_supported': return new ApiError('DEVICE_NOT_SUPPORTED', `device cannot ${type}${detail}`);
    case 'busy': return new ApiError('DEVICE_BUSY', `device is busy${detail}`);
    default: return new ApiError('DEVICE_REJECTED', `device could not ${type}${detail}`);
  }
}
