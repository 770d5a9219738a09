/**
 * The load process of the events bench, forked by bench/events.ts: sends camera posts OPEN LOOP,
 * each at the time the schedule says whatever the answers do, over keep-alive connections it
 * holds itself (plain sockets and a minimal answer reader, so that the load costs little CPU on a
 * machine it shares with the receiver). A post due while no connection is free waits, and that
 * wait counts: every time is taken against the post's due time, not the time it went out.
 *
 * Messages: see `LoadRequest` / `LoadReply` in event-protocol.ts.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { monotonicMs, type LoadReply, type LoadRequest, type RunResult, type RunSpec } from './event-protocol';

/** The schedule starts this long after `go`, so the first posts are not already late. */
const START_LEAD_MS = 20;

interface Connection {
  socket: Socket;
  /** A camera's own connection (else one of the pool). */
  camera: boolean;
  /** Loopback address this connection is made from (cameras: one each). */
  localAddress: string | undefined;
  /** Post number in flight, or -1. */
  current: number;
  /** Camera mode: posts due while this camera's previous one was unanswered, in order. */
  waiting: number[];
  /** Bytes of an answer not complete yet. */
  pending: Buffer | undefined;
}

interface Run {
  spec: RunSpec;
  /** Due time of each post, ms after the start, ascending. */
  offsets: Float64Array;
  /** Connection each post must go on (cameras), or -1 for any free one (pool). */
  connectionOf: Int32Array;
  connections: Connection[];
  idle: Connection[];
  /** Pool mode: posts due while no connection was free, first in first out from `queueHead`. */
  queue: number[];
  queueHead: number;
  requestHead: string;
  result: RunResult;
  start: number;
  next: number;
  settled: number;
  inFlight: number;
  queued: number;
  cpuAtStart: NodeJS.CpuUsage;
  timer: NodeJS.Timeout | undefined;
  finished: boolean;
}

let run: Run | undefined;

function reply(message: LoadReply): void {
  process.send?.(message);
}

/** A small deterministic generator: the same seed gives our server and the floor the same schedule. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

function schedule(spec: RunSpec): { offsets: Float64Array; connectionOf: Int32Array; connectionCount: number } {
  const s = spec.schedule;
  if (s.mode === 'pool') {
    const count = Math.round(s.rate * s.seconds);
    const offsets = new Float64Array(count);
    for (let i = 0; i < count; i++) offsets[i] = (i * 1000) / s.rate;
    return { offsets, connectionOf: new Int32Array(count).fill(-1), connectionCount: s.connections };
  }
  const rand = random(spec.seed);
  const period = 1000 / s.perCamera;
  const each = Math.round(s.perCamera * s.seconds);
  const posts: Array<{ at: number; camera: number }> = [];
  for (let camera = 0; camera < s.cameras; camera++) {
    const phase = rand() * period;
    for (let k = 0; k < each; k++) posts.push({ at: Math.max(0, phase + k * period + (rand() * 2 - 1) * s.jitterMs), camera });
  }
  posts.sort((a, b) => a.at - b.at);
  return { offsets: Float64Array.from(posts, (p) => p.at), connectionOf: Int32Array.from(posts, (p) => p.camera), connectionCount: s.cameras };
}

/** Camera `index` posts from 127.0.x.y: a device of its own, as the server's per-sender cap sees it. */
function cameraAddress(index: number): string {
  return `127.0.${1 + Math.floor(index / 250)}.${1 + (index % 250)}`;
}

function open(r: Run, connection: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: r.spec.host, port: r.spec.port, localAddress: connection.localAddress, noDelay: true });
    connection.socket = socket;
    connection.pending = undefined;
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve();
    });
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => onData(r, connection, chunk));
    socket.once('close', () => onClose(r, connection, socket));
  });
}

async function prepare(spec: RunSpec): Promise<void> {
  if (run) throw new Error('a run is prepared already');
  const { offsets, connectionOf, connectionCount } = schedule(spec);
  const count = offsets.length;
  const r: Run = {
    spec,
    offsets,
    connectionOf,
    connections: [],
    idle: [],
    queue: [],
    queueHead: 0,
    requestHead: '',
    result: {
      intended: new Float64Array(count),
      sent: new Float64Array(count),
      answered: new Float64Array(count).fill(NaN),
      refused: 0,
      failed: 0,
      maxQueued: 0,
      maxInFlight: 0,
      connections: connectionCount,
      cpuUs: 0,
    },
    start: 0,
    next: 0,
    settled: 0,
    inFlight: 0,
    queued: 0,
    cpuAtStart: process.cpuUsage(),
    timer: undefined,
    finished: false,
  };
  const bodyBytes = Buffer.byteLength(spec.head + spec.tail) + 1 + spec.plateDigits;
  r.requestHead = `POST ${spec.path} HTTP/1.1\r\nHost: ${spec.host}:${spec.port}\r\nContent-Type: ${spec.contentType}\r\nContent-Length: ${bodyBytes}\r\n\r\n${spec.head}`;
  run = r;
  const cameras = spec.schedule.mode === 'cameras';
  for (let i = 0; i < connectionCount; i++) {
    r.connections.push({ socket: undefined as unknown as Socket, camera: cameras, localAddress: cameras ? cameraAddress(i) : undefined, current: -1, waiting: [], pending: undefined });
  }
  // A few at a time: a burst of 500 SYNs can overflow the listen backlog.
  for (let i = 0; i < r.connections.length; i += 50) await Promise.all(r.connections.slice(i, i + 50).map((c) => open(r, c)));
  r.idle = [...r.connections];
}

function go(): void {
  const r = run;
  if (!r) throw new Error('no run prepared');
  r.cpuAtStart = process.cpuUsage();
  r.start = monotonicMs() + START_LEAD_MS;
  for (let i = 0; i < r.offsets.length; i++) r.result.intended[i] = r.start + (r.offsets[i] as number);
  r.timer = setTimeout(() => tick(r), START_LEAD_MS);
}

function tick(r: Run): void {
  r.timer = undefined;
  const now = monotonicMs();
  const { offsets, connectionOf } = r;
  while (r.next < offsets.length && r.start + (offsets[r.next] as number) <= now) {
    const post = r.next++;
    const camera = connectionOf[post] as number;
    if (camera >= 0) {
      const connection = r.connections[camera] as Connection;
      if (connection.current < 0) send(r, connection, post);
      else wait(r, () => connection.waiting.push(post));
    } else {
      const connection = r.idle.pop();
      if (connection) send(r, connection, post);
      else wait(r, () => r.queue.push(post));
    }
  }
  if (r.next < offsets.length) r.timer = setTimeout(() => tick(r), Math.max(0, r.start + (offsets[r.next] as number) - monotonicMs()));
}

function wait(r: Run, enqueue: () => void): void {
  enqueue();
  r.queued += 1;
  if (r.queued > r.result.maxQueued) r.result.maxQueued = r.queued;
}

function send(r: Run, connection: Connection, post: number): void {
  connection.current = post;
  r.inFlight += 1;
  if (r.inFlight > r.result.maxInFlight) r.result.maxInFlight = r.inFlight;
  r.result.sent[post] = monotonicMs();
  connection.socket.write(`${r.requestHead}P${String(post).padStart(r.spec.plateDigits, '0')}${r.spec.tail}`);
}

/** Answers are read by their Content-Length (both servers send one); anything else ends the connection. */
function onData(r: Run, connection: Connection, chunk: Buffer): void {
  let data = connection.pending ? Buffer.concat([connection.pending, chunk]) : chunk;
  connection.pending = undefined;
  for (;;) {
    const end = data.indexOf('\r\n\r\n');
    if (end < 0) break;
    const head = data.toString('latin1', 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) {
      connection.socket.destroy();
      return;
    }
    const total = end + 4 + Number(length[1]);
    if (data.length < total) break;
    data = data.subarray(total);
    answered(r, connection, Number(head.slice(9, 12)));
    if (/\r\nconnection: *close/i.test(head)) {
      connection.socket.end();
      return;
    }
  }
  if (data.length > 0) connection.pending = data;
}

function answered(r: Run, connection: Connection, status: number): void {
  const post = connection.current;
  if (post < 0) return;
  r.result.answered[post] = monotonicMs();
  if (status !== 200) r.result.refused += 1;
  settle(r, connection);
}

/** The post on `connection` is done (answered or lost): the connection takes the next waiting post or goes idle. */
function settle(r: Run, connection: Connection): void {
  connection.current = -1;
  r.inFlight -= 1;
  r.settled += 1;
  const next = connection.waiting.length > 0 ? connection.waiting.shift() : !connection.camera && r.queueHead < r.queue.length ? r.queue[r.queueHead++] : undefined;
  if (next !== undefined) {
    r.queued -= 1;
    send(r, connection, next);
  } else if (!connection.camera) {
    r.idle.push(connection);
  }
  if (r.settled === r.offsets.length) finish(r);
}

/**
 * A connection lost mid-run (neither server closes one it answered 200 on, so this is a failure
 * the bench reports): its post counts as failed and the connection is made again; if that fails
 * too the run ends in an error.
 */
function onClose(r: Run, connection: Connection, socket: Socket): void {
  if (connection.socket !== socket || r.finished || run !== r) return;
  r.idle = r.idle.filter((c) => c !== connection);
  open(r, connection).then(
    () => {
      if (connection.current >= 0) {
        r.result.failed += 1;
        settle(r, connection);
      } else if (!connection.camera) {
        r.idle.push(connection);
      }
    },
    (err: unknown) => {
      if (r.timer) clearTimeout(r.timer);
      r.finished = true;
      closeConnections(r);
      reply({ type: 'error', message: `a connection was lost and could not be made again: ${err instanceof Error ? err.message : String(err)}` });
    },
  );
}

function finish(r: Run): void {
  if (r.finished) return;
  r.finished = true;
  const cpu = process.cpuUsage(r.cpuAtStart);
  r.result.cpuUs = cpu.user + cpu.system;
  if (!r.spec.keepOpen) closeConnections(r);
  else run = undefined;
  reply({ type: 'result', result: r.result });
}

let kept: Connection[] = [];

function closeConnections(r: Run): void {
  if (r.timer) clearTimeout(r.timer);
  for (const c of r.connections) c.socket.destroy();
  if (run === r) run = undefined;
}

process.on('message', (message: LoadRequest) => {
  try {
    switch (message.type) {
      case 'clock':
        reply({ type: 'clock', clock: { monotonic: monotonicMs(), wall: performance.timeOrigin + performance.now() } });
        break;
      case 'prepare':
        prepare(message.spec).then(
          () => reply({ type: 'ready' }),
          (err: unknown) => reply({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
        );
        break;
      case 'go':
        if (run?.spec.keepOpen) kept = run.connections;
        go();
        break;
      case 'close-connections':
        for (const c of kept) c.socket.destroy();
        kept = [];
        if (run) closeConnections(run);
        reply({ type: 'closed' });
        break;
      case 'exit':
        for (const c of kept) c.socket.destroy();
        if (run) closeConnections(run);
        process.disconnect();
        break;
    }
  } catch (err) {
    reply({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
});
