/**
 * `npm run bench [name...]`: figures printed as ratios against baselines run in the same process.
 * Nothing here asserts a time; it reports. Names: snapshot, plates, events, gate, streams, ops, xml, fleet, upload (default: all).
 */
import { startSimulator, type Simulator } from '../lib/simulator';
import { eventsThroughput } from './events';
import { fleetIdle } from './fleet';
import { plateToGate } from './gate';
import { PASSWORD, USER } from './measure';
import { operationsOverhead } from './ops';
import { platesAddAndRead } from './plates';
import { snapshotRoundTrip } from './snapshot';
import { streamsThroughput } from './streams';
import { uploadMemory } from './upload';
import { xmlCodec } from './xml';

/**
 * A bench either runs against a simulator in this process, or starts what it measures in other
 * processes (a simulator sharing the bench's process would share its CPU too).
 */
type Bench = { inProcess: (sim: Simulator) => Promise<void> } | { ownProcesses: () => Promise<void> };

const BENCHES: Record<string, Bench> = {
  snapshot: { ownProcesses: snapshotRoundTrip },
  plates: { inProcess: platesAddAndRead },
  events: { ownProcesses: eventsThroughput },
  gate: { ownProcesses: plateToGate },
  streams: { inProcess: streamsThroughput },
  ops: { inProcess: operationsOverhead },
  xml: { inProcess: xmlCodec },
  fleet: { ownProcesses: fleetIdle },
  upload: { ownProcesses: uploadMemory },
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  // Each bench prints its own rounds and repetitions.
  console.log(`node ${process.version}`);
  for (const [name, bench] of Object.entries(BENCHES)) {
    if (wanted.length > 0 && !wanted.includes(name)) continue;
    if ('ownProcesses' in bench) {
      await bench.ownProcesses();
      continue;
    }
    const sim = await startSimulator({ username: USER, password: PASSWORD });
    try {
      await bench.inProcess(sim);
    } finally {
      await sim.close();
    }
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
