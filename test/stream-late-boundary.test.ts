/**
 * Parts are handed out without a timer: at their Content-Length, at the next boundary, or when
 * the chunk that carries them whole ends on a complete-looking part (devices send the boundary
 * before each part). The supervisor's quiet-time flush is set a minute away, so a reading that
 * needed it misses the bound. A fake device over a real socket paces the stream: it sends reading k+1 only once
 * reading k has been delivered, so a part that waited for the next one would stall the test
 * (a generous bound, no time asserted). Every reading must come once, in order.
 */
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { StreamSupervisor } from '../lib/stream/supervisor';
import { DeviceClient } from '../lib/transport/client';
import { waitFor } from './helpers';

const READINGS = 5;
/** How late the late device sends the boundary after its part (ms). */
const LATE_MS = 200;
/** Bound for a reading to arrive before the next is due: generous, a stalled part fails it. */
const DELIVERY_BOUND_MS = 5_000;

type Writer = (res: ServerResponse, k: number) => Promise<void>;

const body = (k: number): string => `group=1 level=${k} threshold=50\r\n`;

/** How each device shapes reading k on the wire (after the `--b` line it opened the stream with, where it has one). */
const DEVICES: Record<string, { opening: string; write: Writer }> = {
  'boundary first, no Content-Length (the field notes device)': {
    opening: '',
    write: async (res, k) => void res.write(`--b\r\nContent-Type: text/plain\r\n\r\n${body(k)}`),
  },
  'boundary first, with Content-Length': {
    opening: '',
    write: async (res, k) => void res.write(`--b\r\nContent-Type: text/plain\r\nContent-Length: ${body(k).length}\r\n\r\n${body(k)}`),
  },
  [`boundary ${LATE_MS} ms after its part`]: {
    opening: '--b\r\n',
    write: async (res, k) => {
      res.write(`Content-Type: text/plain\r\n\r\n${body(k)}`);
      await sleep(LATE_MS);
      res.write('--b\r\n');
    },
  },
  [`boundary ${LATE_MS} ms after a part with no line break of its own`]: {
    opening: '--b\r\n',
    write: async (res, k) => {
      res.write(`Content-Type: text/plain\r\n\r\n${body(k).trimEnd()}`);
      await sleep(LATE_MS);
      res.write('\r\n--b\r\n');
    },
  },
  [`Content-Length, boundary ${LATE_MS} ms after its part`]: {
    opening: '--b\r\n',
    write: async (res, k) => {
      res.write(`Content-Type: text/plain\r\nContent-Length: ${body(k).length}\r\n\r\n${body(k)}`);
      await sleep(LATE_MS);
      res.write('--b\r\n');
    },
  },
};

describe('stream parts without a second wakeup (fake devices over real sockets)', function () {
  this.timeout(60_000);
  let server: Server;
  let client: DeviceClient;
  let supervisor: StreamSupervisor | undefined;

  afterEach(async function () {
    await supervisor?.stop();
    supervisor = undefined;
    await client?.close();
    server?.closeAllConnections();
    if (server?.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  for (const [name, device] of Object.entries(DEVICES)) {
    it(`${name}: every reading delivered once, in order, before the next is sent`, async function () {
      const got: string[] = [];
      const late: number[] = [];
      let sent = 0;
      server = createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const done = (async (): Promise<void> => {
        const [, res] = (await once(server, 'request')) as [unknown, ServerResponse];
        res.writeHead(200, { 'content-type': 'multipart/x-mixed-replace; boundary=b', connection: 'close' });
        if (device.opening !== '') res.write(device.opening);
        for (let k = 1; k <= READINGS; k++) {
          await device.write(res, k);
          sent = k;
          const by = Date.now() + DELIVERY_BOUND_MS;
          while (got.length < k && Date.now() < by) await sleep(5);
          if (got.length < k) late.push(k);
        }
      })();
      const { port } = server.address() as AddressInfo;
      client = new DeviceClient({ host: '127.0.0.1', port, username: 'u', password: 'p', auth: 'basic' });
      // A quiet-time flush a minute away: a reading that waited for it would miss the bound.
      supervisor = new StreamSupervisor({ client, path: '/cgi-bin/admin/detection?type=motion', onPart: (part) => got.push(part.body.toString('latin1')), flushDelay: 60_000 });
      supervisor.start();
      await done;
      assert.deepEqual(late, [], `readings not delivered before the next was due: ${late.join(', ')}`);
      await waitFor('the last boundary to pass', () => sent === READINGS);
      // A sized part keeps its line break (its Content-Length counts it); a scanned one is framed without it.
      assert.deepEqual(
        got.map((reading) => reading.trimEnd()),
        Array.from({ length: READINGS }, (_, i) => body(i + 1).trimEnd()),
      );
    });
  }
});
