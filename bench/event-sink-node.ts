/**
 * `bench-event-sink`: a node type of the events bench only (loaded from a throwaway nodes
 * directory of the bench's runtime, never shipped): the "next node" after `ipcam-plate-event`.
 * It notes when each plate message arrives, on the clock the load process reads, in a typed array
 * indexed by the post number the plate carries (`P000012345`): a clock read and a store per
 * message, nothing sent anywhere during a run. The bench reads the times in bulk afterwards.
 *
 * Admin routes (the runtime listens on 127.0.0.1 only):
 * - `GET /bench-sink/reset?posts=N`: forget the last run, expect posts 0..N-1.
 * - `GET /bench-sink/stats`: messages noted, strays, the clock, and the event server's own counts.
 * - `GET /bench-sink/arrivals`: the arrival times (Float64Array bytes, NaN: not arrived).
 */
import { performance } from 'node:perf_hooks';
import type { EventServer } from '../lib/events/server';
import type { EventServerConfigNode } from '../nodes/event-config';
import type { AdminRequest, AdminResponse, Node, NodeAPI, NodeDef, NodeMessage } from '../nodes/red';
import { monotonicMs, type SinkStats } from './event-protocol';

interface SinkDef extends NodeDef {
  /** The event server whose counts the stats report. */
  server?: string;
}

/** More than any run of the bench sends. */
const MAX_POSTS = 1_000_000;

export = function register(RED: NodeAPI): void {
  let arrivals = new Float64Array(0);
  let arrived = 0;
  let strays = 0;
  let serverId: string | undefined;

  function BenchEventSink(this: Node, def: SinkDef): void {
    RED.nodes.createNode(this, def);
    serverId = def.server;
    this.on('input', (msg: NodeMessage, _send, done) => {
      const at = monotonicMs();
      const plate = (msg.payload as { plate?: unknown } | undefined)?.plate;
      const post = typeof plate === 'string' ? Number(plate.slice(1)) : NaN;
      if (post >= 0 && post < arrivals.length && Number.isNaN(arrivals[post])) {
        arrivals[post] = at;
        arrived += 1;
      } else {
        strays += 1;
      }
      done();
    });
  }
  RED.nodes.registerType('bench-event-sink', BenchEventSink as (this: never, def: never) => void);

  RED.httpAdmin.get('/bench-sink/reset', (req: AdminRequest, res: AdminResponse) => {
    const posts = Number(new URL(req.url ?? '', 'http://sink').searchParams.get('posts'));
    if (!Number.isInteger(posts) || posts < 0 || posts > MAX_POSTS) {
      res.status(400).json({ error: `posts must be 0..${MAX_POSTS}` });
      return;
    }
    arrivals = new Float64Array(posts).fill(NaN);
    arrived = 0;
    strays = 0;
    res.json({ posts });
  });

  RED.httpAdmin.get('/bench-sink/stats', (_req: AdminRequest, res: AdminResponse) => {
    const stats: SinkStats = { arrived, strays, monotonic: monotonicMs(), wall: performance.timeOrigin + performance.now(), server: serverCounts() };
    res.json(stats);
  });

  RED.httpAdmin.get('/bench-sink/arrivals', (_req: AdminRequest, res: AdminResponse) => {
    res.setHeader('content-type', 'application/octet-stream');
    res.end(Buffer.from(arrivals.buffer, arrivals.byteOffset, arrivals.byteLength));
  });

  function serverCounts(): SinkStats['server'] {
    const config = serverId ? (RED.nodes.getNode(serverId) as EventServerConfigNode | null) : null;
    const server = config?.server;
    if (!server) return undefined;
    // The per-sender map is private to the server; the bench reads its size to show it stays bounded.
    const perSender = (server as unknown as { perSender?: Map<string, number> }).perSender;
    return { connections: server.connections, senders: perSender?.size ?? -1, bodyBytes: (server as EventServer).bodyBytes };
  }
};
