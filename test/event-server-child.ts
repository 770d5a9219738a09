/**
 * An EventServer alone in a child process, forked with --expose-gc (`ServerChild` in event-flood.ts)
 * by the hostile and connection-cap tests: its heap after GC is measured without the test's own
 * allocations (the floods it sends), and its sockets are not the test's.
 *
 * Messages in: `'measure'` (answers a `ChildReport`, heap after GC), `'peek'` (the same without the
 * GC, for polling while a test's timing matters), `'close'`. First message out: `{ port }`.
 */
import { EventServer, type EventServerOptions } from '../lib/events/server';

export interface ChildReport {
  heapUsed: number;
  delivered: number;
  plates: string[];
  connections: number;
  warnings: number;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as EventServerOptions;
  let warnings = 0;
  let delivered = 0;
  /** The last few plates delivered: enough to see a real post arrive, bounded whatever is sent. */
  const plates: string[] = [];
  const server = new EventServer({ port: 0, bind: '127.0.0.1', ...options, onWarning: () => (warnings += 1) });
  server.subscribe({
    onPost: (received) => {
      delivered += 1;
      for (const post of received.posts) if (post.kind === 'plate') plates.push(post.plate.slice(0, 32));
      plates.splice(0, Math.max(0, plates.length - 10));
    },
  });
  await server.start();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  process.on('message', (message: unknown) => {
    if (message === 'measure' || message === 'peek') {
      if (message === 'measure') {
        gc();
        gc();
      }
      const report: ChildReport = { heapUsed: process.memoryUsage().heapUsed, delivered, plates: [...plates], connections: server.connections, warnings };
      process.send?.(report);
    } else if (message === 'close') {
      void server.close().then(() => process.disconnect());
    }
  });
  process.send?.({ port: server.port });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
