/**
 * What bench/events.ts and its child processes (the load process, the floor server) say to each
 * other over IPC ('advanced' serialization, so the time arrays travel as typed arrays), and the
 * one clock they all read.
 */

/**
 * Milliseconds on CLOCK_MONOTONIC (`process.hrtime` is libuv's `uv_hrtime`, which reads it on
 * Linux): one system-wide clock, so a time taken in one process can be subtracted from a time taken
 * in another. `performance.timeOrigin + performance.now()` is not: its origin is the wall clock read
 * once at each process start, so two processes disagree by how the wall clock was stepped or slewed
 * between their starts (the bench prints that disagreement beside the check of this clock).
 */
export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

/** One process's reading of both clocks at the same instant. */
export interface ClockReading {
  monotonic: number;
  /** `performance.timeOrigin + performance.now()`. */
  wall: number;
}

/** How posts are spread over connections and time. */
export type Schedule =
  /** `rate` posts a second, evenly spaced, each on whichever of `connections` keep-alive connections is idle (queued in order if none is). */
  | { mode: 'pool'; rate: number; seconds: number; connections: number }
  /**
   * `cameras` devices, each with its own keep-alive connection from its own loopback address
   * (127.0.x.y), posting `perCamera` times a second from a random phase, each post moved by up
   * to +-`jitterMs`; a post due while the camera's previous one is unanswered waits for it.
   */
  | { mode: 'cameras'; cameras: number; perCamera: number; seconds: number; jitterMs: number };

export interface RunSpec {
  host: string;
  port: number;
  path: string;
  contentType: string;
  /** The body is `head + plate + tail`, the plate `P` and post number padded to `plateDigits` digits. */
  head: string;
  tail: string;
  plateDigits: number;
  schedule: Schedule;
  /** Leave the connections open after the run (closed by a `close-connections` message). */
  keepOpen: boolean;
  /** Seed of the camera phases and jitter, so that our server and the floor get the same schedule. */
  seed: number;
}

export type LoadRequest =
  | { type: 'clock' }
  /** Opens the connections and builds the schedule; answered `ready`. */
  | { type: 'prepare'; spec: RunSpec }
  /** Runs the prepared schedule; answered `result`. */
  | { type: 'go' }
  | { type: 'close-connections' }
  | { type: 'exit' };

export interface RunResult {
  /** Per post, by post number: the time it was due (the schedule), sent, and answered (NaN: no answer). */
  intended: Float64Array;
  sent: Float64Array;
  answered: Float64Array;
  /** Posts answered with another status than 200. */
  refused: number;
  /** Posts that got no answer (connection lost). */
  failed: number;
  /** Most posts waiting at once for a connection (pool) or for their camera's previous post. */
  maxQueued: number;
  /** Most posts in flight at once. */
  maxInFlight: number;
  connections: number;
  /** CPU time of the load process over the run, microseconds. */
  cpuUs: number;
}

export type LoadReply = { type: 'clock'; clock: ClockReading } | { type: 'ready' } | { type: 'result'; result: RunResult } | { type: 'closed' } | { type: 'error'; message: string };

/** Memory of a receiver after a full GC, and the connections it holds. */
export interface MemoryProbe {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  connections: number;
}

export type FloorReply =
  | { type: 'listening'; port: number }
  | { type: 'clock'; clock: ClockReading }
  | { type: 'probe'; probe: MemoryProbe }
  /** The like-for-like floor's last plates (plain fast-xml-parser), oldest first. */
  | { type: 'picks'; picks: Array<{ plate: string; list: string; time: string }> };

/** What the bench's sink node (event-sink-node.ts) reports at `GET /bench-sink/stats`. */
export interface SinkStats {
  arrived: number;
  /** Messages whose plate named no expected post, or one that had arrived already. */
  strays: number;
  /** Both clocks of the runtime at the time of the answer. */
  monotonic: number;
  wall: number;
  /** The event server's bounded state: open connections, senders holding them, body bytes being received. */
  server: { connections: number; senders: number; bodyBytes: number } | undefined;
}
