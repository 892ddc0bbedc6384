// Remote device control (docs/control.md). Each operation needs a bound, online box;
// the three inkjet operations also need an inkjet printer that supports strict mode, and the
// heavy ink flush is refused within 24 hours of the previous one (docs/api.md, "Limits").
import { ApiError, api, type Ack, type ControlCommandType } from '@boxhub/protocol';
import type { Clock } from '../../clock.ts';
import type { BoxGateway } from '../../box-link/gateway.ts';
import type { DeviceRow } from '../../db/schema.ts';
import type { DeviceRepository } from '../devices/repository.ts';
import type { DeviceService } from '../devices/service.ts';
import { parseState } from '../devices/view.ts';
import { offlineError } from '../devices/offline.ts';

export const INK_FLUSH_WINDOW_MS = 24 * 60 * 60 * 1000;
export type InkjetOp = 'head_clean' | 'power_ink_flush' | 'nozzle_check';
export const INKJET_OPS: readonly InkjetOp[] = ['head_clean', 'power_ink_flush', 'nozzle_check'];

/** Which inkjet operations the box's printer takes now (the checks inkjet() makes first). */
export interface InkjetAvailability {
  ops: InkjetOp[];
  /** Why there are none, when there are none. */
  why?: string;
  /** While the heavy ink flush's 24-hour window is still running: when the next is allowed (Unix ms). */
  flushNextAt?: number;
}

export class ControlService {
  private readonly devices: DeviceService;
  private readonly repo: DeviceRepository;
  private readonly gateway: BoxGateway;
  private readonly clock: Clock;

  constructor(devices: DeviceService, repo: DeviceRepository, gateway: BoxGateway, clock: Clock) {
    this.devices = devices;
    this.repo = repo;
    this.gateway = gateway;
    this.clock = clock;
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
    const refused = inkjetRefusal(d, op);
    if (refused) throw refused;
    if (op !== 'power_ink_flush') {
      await this.send(d, op, {});
      return;
    }

    const now = this.clock.now();
    const claim = await this.repo.claimInkFlush(d.uuid, now, now - INK_FLUSH_WINDOW_MS);
    if (!claim.ok) {
      const next = new Date(claim.last + INK_FLUSH_WINDOW_MS).toISOString();
      throw new ApiError(
        'DEVICE_COOLDOWN',
        `power ink flush is allowed once per 24 hours; the next is allowed after ${next}`,
        { next_allowed_at: claim.last + INK_FLUSH_WINDOW_MS },
      );
    }
    try {
      await this.send(d, op, {});
    } catch (e) {
      // Given back only when the box certainly did not flush: it refused (its ack says why) or
      // the command never left this server. Without an acknowledgement (30005) the box may have
      // flushed and lost only its answer, so the window is kept: a second heavy flush within
      // 24 hours is what the limit is there to prevent.
      if (!(e instanceof ApiError && e.key === 'DEVICE_TIMEOUT'))
        await this.repo.releaseInkFlush(d.uuid, now, claim.previous);
      throw e;
    }
  }

  /** What the web console offers: the operations inkjet() would not refuse for the printer the
   *  box last reported (online or not: an offline box is refused when asked). */
  async inkjetAvailability(appId: string, uuid: string): Promise<InkjetAvailability> {
    const d = await this.devices.bound(appId, uuid);
    const ops = INKJET_OPS.filter((op) => !inkjetRefusal(d, op));
    const last = d.last_power_ink_flush_at === null ? null : Number(d.last_power_ink_flush_at);
    const flush =
      last !== null && last + INK_FLUSH_WINDOW_MS > this.clock.now() ? { flushNextAt: last + INK_FLUSH_WINDOW_MS } : {};
    if (ops.length) return { ops, ...flush };
    const printer = parseState(d)?.printer;
    const why = !printer?.connected
      ? 'no printer is connected'
      : printer.kind !== 'inkjet' || !printer.strict
        ? (inkjetRefusal(d, 'head_clean')?.message.replace(/^head_clean is /, '') ?? '')
        : `this printer (${modelOf(printer)}) offers none`;
    return { ops, why };
  }

  private async online(appId: string, uuid: string): Promise<DeviceRow> {
    const d = await this.devices.bound(appId, uuid);
    if (d.online !== 1) throw offlineError(d);
    return d;
  }

  private async send(d: DeviceRow, type: ControlCommandType, params: Record<string, unknown>): Promise<void> {
    const ack = await this.gateway.command(d.uuid, type, params);
    if (!ack.ok) throw ackError(type, ack);
  }
}

const modelOf = (p: { make?: string | undefined; model?: string | undefined }) =>
  [p.make, p.model].filter(Boolean).join(' ') || 'unknown model';

/** Why inkjet() refuses `op` for this box's printer (docs/control.md, "Inkjet operations"). */
function inkjetRefusal(d: DeviceRow, op: InkjetOp): ApiError | undefined {
  const printer = parseState(d)?.printer;
  if (!printer?.connected) return new ApiError('PRINTER_NOT_CONNECTED', `${op} needs a connected printer`);
  if (printer.kind !== 'inkjet' || !printer.strict) {
    return new ApiError(
      'DEVICE_NOT_SUPPORTED',
      `${op} is only for inkjet printers that support strict mode; this printer is ${printer.kind ?? 'of unknown kind'}${printer.strict ? '' : ' without strict mode'}`,
    );
  }
  if (!printer.maintenance?.includes(op))
    return new ApiError('DEVICE_NOT_SUPPORTED', `this printer (${modelOf(printer)}) does not support ${op}`);
  return undefined;
}

function ackError(type: string, ack: Ack): ApiError {
  const detail = ack.message ? `: ${ack.message}` : '';
  switch (ack.reason) {
    case 'not_supported':
      return new ApiError('DEVICE_NOT_SUPPORTED', `device cannot ${type}${detail}`);
    case 'busy':
      return new ApiError('DEVICE_BUSY', `device is busy${detail}`);
    default:
      return new ApiError('DEVICE_REJECTED', `device could not ${type}${detail}`);
  }
}
