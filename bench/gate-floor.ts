/**
 * The floor of the gate bench, alone in a child process forked by bench/gate.ts: a bare
 * `node:http` server that reads each plate post, parses it with plain fast-xml-parser, picks the
 * plate and its list (bench/plain-pick.ts), answers the camera as the event server does and, for
 * a plate on the allow list, sends the relay request the relay node sends, over one keep-alive
 * undici client. No limits, no checks, no Node-RED: the least a gate can cost in Node.js.
 *
 * Arguments: device origin, relay request target, Authorization header, allowed list type.
 * First message out: `{ type: 'listening', port }`; in: `'picks'` (the last plates picked),
 * `'exit'`.
 */
import { createServer } from 'node:http';
import { Client } from 'undici';
import { SUCCESS_DOCUMENT } from '../lib/events/server';
import { pickPlates, type PlatePick } from './plain-pick';

export type GateFloorReply = { type: 'listening'; port: number } | { type: 'picks'; picks: PlatePick[]; relayFailures: number };

const [origin, relayPath, authorization, allowed] = process.argv.slice(2) as [string, string, string, string];
const ANSWER = Buffer.from(SUCCESS_DOCUMENT, 'utf8');
const HEADERS = { 'content-type': 'application/xml', 'content-length': ANSWER.length };
const KEEP_ALIVE_MS = 65_000;
/** Plates kept for the bench's check (the last ones). */
const KEPT = 256;

const device = new Client(origin, { keepAliveTimeout: 30_000 });
const picks: PlatePick[] = [];
let relayFailures = 0;

function openGate(): void {
  device
    .request({ method: 'GET', path: relayPath, headers: { authorization } })
    .then(async (res) => {
      if (res.statusCode !== 200) relayFailures += 1;
      await res.body.dump();
    })
    .catch(() => (relayFailures += 1));
}

const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  req.on('end', () => {
    const found = pickPlates(Buffer.concat(chunks, size));
    res.writeHead(200, HEADERS);
    res.end(ANSWER);
    for (const pick of found) {
      picks.push(pick);
      if (picks.length > KEPT) picks.shift();
      if (pick.list === allowed) openGate();
    }
  });
});

const reply = (message: GateFloorReply): void => {
  process.send?.(message);
};

process.on('message', (message: unknown) => {
  if (message === 'picks') reply({ type: 'picks', picks: [...picks], relayFailures });
  if (message === 'exit') {
    server.closeAllConnections();
    server.close(() => void device.close().finally(() => process.disconnect()));
  }
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  reply({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
