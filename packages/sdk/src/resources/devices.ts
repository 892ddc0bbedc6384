// Device binding and management (docs/api.md, "Devices"; tag `device` in /openapi.json).
import type { Body, GetResult, Query } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export type Device = NonNullable<GetResult<'/api/client/info'>['client']>;

export class Devices {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Exchanges the code on a box's label for its uuid (30003 when another application bound it). */
  getUuid(query: Query<'/api/client/get_uuid'>, o?: CallOptions) {
    return this.#t.get('/api/client/get_uuid', query, o);
  }

  /** Binds a device to this application (30003 when it is bound already). */
  bind(body: Body<'/api/client/bind'>, o?: CallOptions) {
    return this.#t.post('/api/client/bind', body, o);
  }

  unbind(body: Body<'/api/client/unbind'>, o?: CallOptions) {
    return this.#t.post('/api/client/unbind', body, o);
  }

  /** Renames a bound device or changes its remark. */
  edit(body: Body<'/api/client/edit'>, o?: CallOptions) {
    return this.#t.post('/api/client/edit', body, o);
  }

  /** A bound device: online state, network, printer and scanner. */
  info(query: Query<'/api/client/info'>, o?: CallOptions) {
    return this.#t.get('/api/client/info', query, o);
  }

  /** One page of the bound devices (page from 1). */
  list(query: Query<'/api/client/list'>, o?: CallOptions) {
    return this.#t.get('/api/client/list', query, o);
  }

  /** Every bound device, page after page. */
  async *all(o?: CallOptions): AsyncGenerator<Device> {
    for (let page = 1; ; page++) {
      const p = await this.list({ page }, o);
      yield* p.clients;
      if (p.clients.length === 0 || page * p.page_size >= p.total) return;
    }
  }

  /** Where this application's device events go (device.online, device.offline,
   *  device.printer_state, device.scanner_state) and the settle time that damps flapping
   *  (docs/callbacks.md, "Device events"). */
  eventCallback(o?: CallOptions) {
    return this.#t.get('/api/application/device_callback', {}, o);
  }

  /** Sets the URL device events go to; `""` stops them. */
  setEventCallback(body: Body<'/api/application/device_callback'>, o?: CallOptions) {
    return this.#t.post('/api/application/device_callback', body, o);
  }
}
