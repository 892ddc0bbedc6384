// Remote device control (docs/api.md, "Device control"; tag `control` in /openapi.json; docs/control.md).
// Each call waits for the box's acknowledgement: 30004 offline, 30005 no answer in time.
import type { Body } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export class Control {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** Beeps: `buzz` holds each beep's length in ms, `gap` the pause between them. */
  buzz(body: Body<'/api/control/buzz'>, o?: CallOptions) {
    return this.#t.post('/api/control/buzz', body, o);
  }

  reboot(body: Body<'/api/control/reboot'>, o?: CallOptions) {
    return this.#t.post('/api/control/reboot', body, o);
  }

  headClean(body: Body<'/api/control/head_clean'>, o?: CallOptions) {
    return this.#t.post('/api/control/head_clean', body, o);
  }

  /** Heavy ink flush: at most once per 24 h per device (30007 otherwise). */
  powerInkFlush(body: Body<'/api/control/power_ink_flush'>, o?: CallOptions) {
    return this.#t.post('/api/control/power_ink_flush', body, o);
  }

  nozzleCheck(body: Body<'/api/control/nozzle_check'>, o?: CallOptions) {
    return this.#t.post('/api/control/nozzle_check', body, o);
  }
}
