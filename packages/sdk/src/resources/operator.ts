// The operator API (docs/configuration.md "Credentials"; tag `operator` in /openapi.json):
// applications, their API keys and box credentials. It answers only to the deployment's
// BOXHUB_OPERATOR_TOKEN, given as the client's `apiKey` (20003 otherwise). New keys and box
// secrets are in the answer once and never again.
import type { Body, Query } from '../api-types.ts';
import type { CallOptions, Transport } from '../transport.ts';

export class Operator {
  readonly #t: Transport;
  constructor(t: Transport) {
    this.#t = t;
  }

  /** A new application with its first API key ("default"). */
  createApp(body: Body<'/api/operator/app/create'>, o?: CallOptions) {
    return this.#t.post('/api/operator/app/create', body, o);
  }

  /** Every application, newest first, 50 per page: keys in use and boxes bound. */
  listApps(query: Query<'/api/operator/app/list'>, o?: CallOptions) {
    return this.#t.get('/api/operator/app/list', query, o);
  }

  /** Every box, 100 per page: its state, the application it is bound to, a revoked secret. */
  listDevices(query: Query<'/api/operator/device/list'>, o?: CallOptions) {
    return this.#t.get('/api/operator/device/list', query, o);
  }

  /** An application's keys: name, prefix, created, last used, revoked (never the key). */
  listKeys(query: Query<'/api/operator/app/key/list'>, o?: CallOptions) {
    return this.#t.get('/api/operator/app/key/list', query, o);
  }

  createKey(body: Body<'/api/operator/app/key/create'>, o?: CallOptions) {
    return this.#t.post('/api/operator/app/key/create', body, o);
  }

  /** A new key with the same name; the old one stops working at once. */
  rotateKey(body: Body<'/api/operator/app/key/rotate'>, o?: CallOptions) {
    return this.#t.post('/api/operator/app/key/rotate', body, o);
  }

  revokeKey(body: Body<'/api/operator/app/key/revoke'>, o?: CallOptions) {
    return this.#t.post('/api/operator/app/key/revoke', body, o);
  }

  /** Provisions a box: its uuid and MQTT secret, for the box's configuration. */
  registerDevice(body: Body<'/api/operator/device/register'>, o?: CallOptions) {
    return this.#t.post('/api/operator/device/register', body, o);
  }

  /** A new box secret; the box's open session is dropped and the old secret refused. */
  rotateDeviceSecret(body: Body<'/api/operator/device/rotate_secret'>, o?: CallOptions) {
    return this.#t.post('/api/operator/device/rotate_secret', body, o);
  }

  /** No login works for the box until its secret is rotated again. */
  revokeDevice(body: Body<'/api/operator/device/revoke'>, o?: CallOptions) {
    return this.#t.post('/api/operator/device/revoke', body, o);
  }

  // Running a fleet (docs/fleet.md, docs/updates.md).

  /** Registers boxes by the hundred with labels; a code registered before is `exists` (no secret). */
  bulkRegisterDevices(body: Body<'/api/operator/device/bulk_register'>, o?: CallOptions) {
    return this.#t.post('/api/operator/device/bulk_register', body, o);
  }

  /** Sends one online box a release now; answered once the box has checked it. */
  updateDevice(body: Body<'/api/operator/device/update'>, o?: CallOptions) {
    return this.#t.post('/api/operator/device/update', body, o);
  }

  /** A box's recent connects, disconnects, updates and errors, newest first. */
  deviceHistory(query: Query<'/api/operator/device/history'>, o?: CallOptions) {
    return this.#t.get('/api/operator/device/history', query, o);
  }

  /** A signed agent release: manifest, signature and the tarball in base64. */
  uploadRelease(body: Body<'/api/operator/release/upload'>, o?: CallOptions) {
    return this.#t.post('/api/operator/release/upload', body, o);
  }

  listReleases(o?: CallOptions) {
    return this.#t.get('/api/operator/release/list', {}, o);
  }

  /** Rolls a release out in waves to boxes chosen by list, label or percentage. */
  createRollout(body: Body<'/api/operator/rollout/create'>, o?: CallOptions) {
    return this.#t.post('/api/operator/rollout/create', body, o);
  }

  listRollouts(o?: CallOptions) {
    return this.#t.get('/api/operator/rollout/list', {}, o);
  }

  rolloutInfo(query: Query<'/api/operator/rollout/info'>, o?: CallOptions) {
    return this.#t.get('/api/operator/rollout/info', query, o);
  }

  cancelRollout(body: Body<'/api/operator/rollout/cancel'>, o?: CallOptions) {
    return this.#t.post('/api/operator/rollout/cancel', body, o);
  }

  /** The fleet at a glance: boxes by state, agent version and label. */
  fleetSummary(o?: CallOptions) {
    return this.#t.get('/api/operator/fleet/summary', {}, o);
  }
}
