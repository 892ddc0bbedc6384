// aedes's memory persistence answers every SUBSCRIBE by testing each retained message it holds
// against the filter (aedes-persistence 11, `retainedMessagesByPattern`): a cost per login that
// grows with the fleet, since each box keeps a retained presence and state. With 10,000 boxes a
// box's one subscription (its literal `box/{uuid}/cmd`) tested 20,000 topics, and a fleet
// logging in after a restart cost the node O(n²) (bench/README.md, "reconnect-storm").
// Here the retained messages are also kept by topic, and a SUBSCRIBE whose filters have no
// wildcard is answered from that index; a filter with + or # takes aedes's own path.
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { AedesMemoryPersistence, Packet } from 'aedes-persistence';

// A CommonJS module whose export is the factory; its typings declare it as an ES default export,
// which TypeScript does not call through a default import of CommonJS.
const memory = createRequire(import.meta.url)('aedes-persistence') as () => AedesMemoryPersistence;

const isLiteral = (filter: string): boolean => !filter.includes('+') && !filter.includes('#');

export function indexedMemoryPersistence(): AedesMemoryPersistence {
  const persistence = memory();
  const byTopic = new Map<string, Packet>();
  const store = persistence.storeRetained.bind(persistence);
  const combi = persistence.createRetainedStreamCombi.bind(persistence);
  persistence.storeRetained = (packet, cb) => {
    // Only PUBLISH packets are retained; an empty one deletes the topic's ([MQTT-3.3.1-10]).
    // A copy, as aedes keeps.
    if (packet.cmd === 'publish') {
      if (packet.payload.length === 0) byTopic.delete(packet.topic);
      else byTopic.set(packet.topic, { ...packet });
    }
    return store(packet, cb);
  };
  persistence.createRetainedStreamCombi = (patterns) => {
    if (!patterns.every(isLiteral)) return combi(patterns);
    return Readable.from(
      patterns.flatMap((p) => {
        const r = byTopic.get(p);
        return r ? [r] : [];
      }),
    );
  };
  return persistence;
}
