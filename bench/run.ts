/**
 * `npm run bench [name...]`: figures printed as ratios against baselines run in the same process.
 * Nothing here asserts a time; it reports. Names: snapshot, plates, events, streams, ops, xml, fleet (default: all).
 */
import { startSimulator, type Simulator } from '../lib/simulator';
import { eventsThroughput } from './events';
import { fleetIdle } from './fleet';
import { PASSWORD, PER_ROUND, ROUNDS, USER } from './measure';
import { operationsOverhead } from './ops';
import { platesAddAndRead } from './plates';
import { snapshotRoundTrip } from './snapshot';
import { streamsThroughput } from './streams';
import { xmlCodec } from './xml';

const BENCHES: Record<string, (sim: Simulator) => Promise<void>> = {
  snapshot: snapshotRoundTrip,
  plates: platesAddAndRead,
  events: eventsThroughput,
  streams: streamsThroughput,
  ops: operationsOverhead,
  xml: xmlCodec,
  fleet: fleetIdle,
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  console.log(`node ${process.version}, ${ROUNDS} rounds x ${PER_ROUND} calls where timed in rounds, median round reported`);
  for (const [name, bench] of Object.entries(BENCHES)) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    const sim = await startSimulator({ username: USER, password: PASSWORD });
    try {
      await bench(sim);
    } finally {
      await sim.close();
    }
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
