/**
 * The floors of the events bench, each alone in a child process forked by bench/events.ts: a bare
 * `node:http` server that reads each post's body fully and answers what the event server answers
 * (200, the same XML document and headers), and does nothing else: no limits, no parse, no
 * Node-RED. Its CPU per post is the least any Node.js receiver of these posts can spend.
 *
 * With the argument `parse`, the like-for-like floor: it also parses each body with plain
 * fast-xml-parser and picks plate, list type and time (bench/plain-pick.ts), the work the event
 * server cannot skip; `'picks'` answers the last plates picked, for the bench's check.
 *
 * First message out: `{ type: 'listening', port }`; in: `'clock'`, `'probe'` (memory after GC: run
 * with --expose-gc), `'connections'` (the count alone), `'exit'`.
 */
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SUCCESS_DOCUMENT } from '../lib/events/server';
import { monotonicMs, type FloorReply } from './event-protocol';
import { pickPlates, type PlatePick } from './plain-pick';

const PARSE = process.argv[2] === 'parse';
/** Plates kept for the check: the last ones, in a ring. */
const KEPT = 64;
const picks: PlatePick[] = [];
let picked = 0;

const ANSWER = Buffer.from(SUCCESS_DOCUMENT, 'utf8');
const HEADERS = { 'content-type': 'application/xml', 'content-length': ANSWER.length };
/** As the event server: cameras keep their connection between posts. */
const KEEP_ALIVE_MS = 65_000;

const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  req.on('end', () => {
    // The body in one Buffer, as a receiver that parses it would need it.
    const body = Buffer.concat(chunks, size);
    if (PARSE) for (const pick of pickPlates(body)) picks[picked++ % KEPT] = pick;
    res.writeHead(200, HEADERS);
    res.end(ANSWER);
  });
});

let connections = 0;
server.on('connection', (socket: Socket) => {
  connections += 1;
  socket.once('close', () => (connections -= 1));
});

const reply = (message: FloorReply): void => {
  process.send?.(message);
};

process.on('message', (message: unknown) => {
  if (message === 'clock') reply({ type: 'clock', clock: { monotonic: monotonicMs(), wall: performance.timeOrigin + performance.now() } });
  if (message === 'probe') {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    const memory = process.memoryUsage();
    reply({ type: 'probe', probe: { rss: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external, connections } });
  }
  if (message === 'connections') reply({ type: 'probe', probe: { rss: NaN, heapUsed: NaN, heapTotal: NaN, external: NaN, connections } });
  if (message === 'picks') reply({ type: 'picks', picks: picks.length < KEPT ? [...picks] : [...picks.slice(picked % KEPT), ...picks.slice(0, picked % KEPT)] });
  if (message === 'exit') {
    server.closeAllConnections();
    server.close(() => process.disconnect());
  }
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  reply({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
