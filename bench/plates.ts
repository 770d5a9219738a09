import { performance } from 'node:perf_hooks';
import type { Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { addPlates, queryPlates } from '../lib/ops/plates';
import { PASSWORD, USER } from './measure';

const COUNT = 10_000;

interface Run {
  case: string;
  requests: number;
  ms: number;
}

/** 10,000 plates added and read back: batched (100 per add, 100 per page) against one request per plate. */
export async function platesAddAndRead(sim: Simulator): Promise<void> {
  console.log(`\n## Plate database: ${COUNT} plates added and read back`);
  const client = new DeviceClient({ host: sim.host, port: sim.port, username: USER, password: PASSWORD, auth: 'basic' });
  const plates = Array.from({ length: COUNT }, (_, i) => `B${String(i).padStart(6, '0')}`);
  const runs: Run[] = [];
  const measure = async (name: string, work: () => Promise<void>): Promise<void> => {
    const before = sim.state.requestCount;
    const start = performance.now();
    await work();
    runs.push({ case: name, requests: sim.state.requestCount - before, ms: Math.round(performance.now() - start) });
  };

  sim.state.plates.clear();
  await measure('add, batched (addPlates, 100 per request)', async () => {
    const results = await addPlates(client, plates, { group: 'bench' });
    if (results.some((r) => !r.ok)) throw new Error('a batched add failed');
  });
  await measure('read back, paged (queryPlates, no limit)', async () => {
    const { plates: read } = await queryPlates(client, { group: 'bench' });
    if (read.length !== COUNT) throw new Error(`read back ${read.length}`);
  });

  sim.state.plates.clear();
  await measure('add, one request per plate', async () => {
    for (const plate of plates) {
      const [result] = await addPlates(client, plate, { group: 'bench' });
      if (!result?.ok) throw new Error('a single add failed');
    }
  });
  await measure('read back, one request per plate (limit 1)', async () => {
    for (let offset = 0; offset < COUNT; offset++) await queryPlates(client, { group: 'bench', offset, limit: 1 });
  });
  await client.close();

  const [batchedAdd, batchedRead, singleAdd, singleRead] = runs as [Run, Run, Run, Run];
  console.table(runs.map((r) => ({ ...r, 'plates/s': Math.round((COUNT * 1000) / Math.max(r.ms, 1)) })));
  console.log(
    `batched vs one per plate: add ${(singleAdd.ms / batchedAdd.ms).toFixed(1)}x faster with ${singleAdd.requests / batchedAdd.requests}x fewer requests; ` +
      `read ${(singleRead.ms / batchedRead.ms).toFixed(1)}x faster with ${singleRead.requests / batchedRead.requests}x fewer requests`,
  );
}
