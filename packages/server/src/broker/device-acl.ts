// What a box may do on the broker: publish and subscribe only under its own box/{uuid}/
// (docs/box-protocol.md, "Access control"). The same rules are written as a Mosquitto ACL
// pattern in scripts/ci/mosquitto; this is the embedded broker's copy.
const PUBLISH = /^box\/([^/+#]+)\/(state|presence|event|req|ack\/[^/+#]+)$/;

export function mayPublish(clientId: string, topic: string): boolean {
  const m = PUBLISH.exec(topic);
  return m !== null && m[1] === clientId;
}

export function maySubscribe(clientId: string, filter: string): boolean {
  return filter === `box/${clientId}/cmd`;
}
