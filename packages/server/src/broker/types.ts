// One adapter over "an MQTT broker": aedes inside this process (default) or any standard
// external broker (Mosquitto, EMQX). The rest of the server sees only this interface.
export type MessageHandler = (topic: string, payload: Buffer) => void;

export interface SubscribeOptions {
  /**
   * Deliver each message to one server node only. External brokers do it with a shared
   * subscription ($share/boxhub/…); the embedded broker has one node, so it subscribes plainly
   * (aedes 1.x accepts $share but delivers nothing).
   */
  shared?: boolean;
}

export interface Broker {
  publish(topic: string, payload: string | Buffer, opts?: { qos?: 0 | 1; retain?: boolean }): Promise<void>;
  subscribe(filter: string, handler: MessageHandler, opts?: SubscribeOptions): Promise<void>;
  /**
   * Hands `handler` the messages the broker retains on `filter`, once, and resolves when all
   * have arrived. External brokers only: retained messages never reach shared subscriptions
   * (MQTT 5, 4.8.2), so a node reads them itself to learn what it missed while no node was
   * listening (box presence, docs/box-protocol.md). The embedded broker starts empty.
   */
  readRetained?(filter: string, handler: MessageHandler): Promise<void>;
  /** Calls `listener` each time the connection to the broker comes back after a loss. */
  onReconnect?(listener: () => void): void;
  close(): Promise<void>;
  /**
   * Gives a newly registered box its broker login. The embedded broker checks the database
   * itself and needs nothing; an external broker gets a client entry (Mosquitto: dynamic
   * security plugin).
   */
  provisionDevice?(uuid: string, secret: string): Promise<void>;
  /** Removes a box's login (a revoked secret); external brokers only. */
  deprovisionDevice?(uuid: string): Promise<void>;
  /** Drops the box's current session, if this broker holds it (embedded broker). */
  disconnectDevice?(uuid: string): void;
  /** The URL boxes connect to, when this process runs the broker itself. */
  readonly listenUrl: string | undefined;
}

/** Verifies a box's MQTT login: username = device uuid, password = device secret. */
export type DeviceAuthenticator = (uuid: string, secret: string) => Promise<boolean>;

/** Largest message a box may publish; files never travel over MQTT (architecture notes). */
export const MAX_BOX_MESSAGE_BYTES = 256 * 1024;
