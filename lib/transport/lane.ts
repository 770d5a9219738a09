import type { Socket } from 'node:net';
import { Client, type buildConnector } from 'undici';
import { IpcamError } from '../errors/errors';
import type { AbortLine } from './deadline';

/** One keep-alive connection of a lane (an undici Client) and whether an exchange of ours holds it. */
export interface Seat {
  readonly client: Client;
  /** An exchange of ours holds it, from its first request to the last byte of its answer. */
  busy: boolean;
  /** Its socket is open. */
  connected: boolean;
  /** The socket of its connection, the last one opened (kept after it closes, until the next). */
  socket: Socket | undefined;
}

/**
 * A connection kept alive from an earlier answer, as a request was handed to it: the socket and
 * the bytes it had read and written by then.
 */
export interface Reuse {
  readonly socket: Socket;
  readonly bytesRead: number;
  readonly bytesWritten: number;
}

/**
 * The connection a request dispatched now on `seat` goes out on, when it is one kept alive that
 * has carried an answer already; undefined when the request opens a new one.
 */
export function reuseOf(seat: Seat): Reuse | undefined {
  const socket = seat.socket;
  if (socket === undefined || !seat.connected || socket.destroyed || socket.bytesRead === 0) return undefined;
  return { socket, bytesRead: socket.bytesRead, bytesWritten: socket.bytesWritten };
}

/**
 * The request went out on the kept-alive connection of `reuse` (it wrote; undici found it open),
 * which is still the seat's (no new one was opened meanwhile), has closed, and read no byte
 * since: the device closed it without a byte of the answer (the keep-alive race of the field notes).
 */
export function closedUnanswered(seat: Seat, reuse: Reuse): boolean {
  const socket = reuse.socket;
  return seat.socket === socket && socket.destroyed && socket.bytesWritten > reuse.bytesWritten && socket.bytesRead === reuse.bytesRead;
}

interface Waiter {
  resolve(seat: Seat): void;
  reject(err: unknown): void;
  line: AbortLine;
  onAbort(): void;
}

/**
 * Up to `max` keep-alive connections to one device, each an undici Client made when an exchange
 * needs one, and dropped once its socket has closed with no exchange on it: a device with
 * nothing to ask holds no Client, no queue and no socket.
 *
 * Not undici's Pool, for two reasons measured on a fleet (bench/device-heap.ts): a Pool holds a
 * 2048-slot queue (16 KB) from its creation, and it hands a request that follows an answer at
 * once (an authentication retry, the next call of a loop) to a second connection: undici marks
 * the first free only on its next turn (setImmediate), so a Pool makes a Client beside it, opens
 * a second socket to the device and makes a third Client in advance. Here an exchange holds its
 * seat until its answer is read, its retries go on the same connection, and the next exchange
 * takes the seat that is free by our count.
 *
 * A seat let go is given one turn of the event loop before the next exchange takes it: many
 * cameras close the connection after every answer without saying so (field notes), and their
 * close arrives with or just after the answer; handed on at once, the next request went out on
 * the closing connection and failed. After that turn a closed connection is dropped and the next
 * exchange gets a new one. When every seat is held (or one is taking its turn), exchanges wait in
 * order, each within its own deadline.
 */
export class Lane {
  private readonly seats: Seat[] = [];
  private readonly waiters: Waiter[] = [];
  /** Seats let go whose turn (see above) has not come yet. */
  private settling = 0;
  private closed = false;

  /**
   * @param options shared by every Client of the lane (and of the device's other lane): built
   *   once per device, never changed.
   */
  constructor(
    private readonly origin: string,
    private readonly options: Readonly<Client.Options>,
    private readonly max: number,
  ) {}

  /** Clients the lane holds now (connected or not). */
  get size(): number {
    return this.seats.length;
  }

  /** A seat for one exchange: a free one, or a new one while under `max`; none when all are held. */
  take(): Seat | undefined {
    if (this.closed) throw closedError();
    for (const seat of this.seats) {
      if (!seat.busy) {
        seat.busy = true;
        return seat;
      }
    }
    // A seat taking its turn is waited for rather than a connection opened beside it.
    if (this.settling > 0 || this.seats.length >= this.max) return undefined;
    return this.add();
  }

  /** The first seat freed, in the order asked; rejects with the line's reason when it aborts first. */
  wait(line: AbortLine): Promise<Seat> {
    if (this.closed) return Promise.reject(closedError());
    if (line.aborted) return Promise.reject(line.reason);
    return new Promise<Seat>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        line,
        onAbort: () => {
          const at = this.waiters.indexOf(waiter);
          if (at !== -1) this.waiters.splice(at, 1);
          reject(line.reason);
        },
      };
      line.whenAborted(waiter.onAbort);
      this.waiters.push(waiter);
    });
  }

  /** The exchange holding `seat` is over (its answer read, dumped or destroyed): free after one turn. */
  release(seat: Seat): void {
    if (this.closed || !this.seats.includes(seat)) return;
    this.settling += 1;
    setImmediate(() => {
      this.settling -= 1;
      if (this.closed) return;
      seat.busy = false;
      // Its connection closed meanwhile (or never opened): the next exchange gets a new one.
      if (!seat.connected) this.drop(seat);
      this.serve();
    });
  }

  /** Destroys every Client (open sockets and queued requests with them); waiting exchanges fail with ECONN. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.line.forget(waiter.onAbort);
      waiter.reject(closedError());
    }
    await Promise.all(this.seats.splice(0).map((seat) => seat.client.destroy().catch(() => undefined)));
  }

  private add(): Seat {
    // The connector tells the seat each socket it opens (called once the connect is done).
    const client = new Client(this.origin, this.tracking((socket) => (seat.socket = socket)));
    const seat: Seat = { client, busy: true, connected: false, socket: undefined };
    seat.client.on('connect', () => {
      seat.connected = true;
    });
    seat.client.on('disconnect', () => {
      seat.connected = false;
      // Its keep-alive ended (or the device closed it) with nothing of ours on it.
      if (!seat.busy) {
        this.drop(seat);
        this.serve();
      }
    });
    // A failed connect is the exchange's error; the Client is dropped when the exchange lets it go.
    seat.client.on('connectionError', () => undefined);
    this.seats.push(seat);
    return seat;
  }

  /** The lane's options, with a connector that hands `opened` each socket it connects (for `reuseOf`). */
  private tracking(opened: (socket: Socket) => void): Client.Options {
    const connect = this.options.connect;
    if (typeof connect !== 'function') return this.options;
    const tracked: buildConnector.connector = (options, callback) =>
      connect(options, (...args) => {
        if (args[0] === null) opened(args[1]);
        callback(...args);
      });
    return { ...this.options, connect: tracked };
  }

  private drop(seat: Seat): void {
    const at = this.seats.indexOf(seat);
    if (at === -1) return;
    this.seats.splice(at, 1);
    void seat.client.destroy().catch(() => undefined);
  }

  /** Hands seats to the exchanges waiting, in order, as `take` finds them (none after `close`: nobody waits then). */
  private serve(): void {
    while (this.waiters.length > 0) {
      const seat = this.take();
      if (!seat) return;
      const next = this.waiters.shift() as Waiter;
      next.line.forget(next.onAbort);
      next.resolve(seat);
    }
  }
}

function closedError(): IpcamError {
  return new IpcamError('ECONN', 'The connection to the device is closed');
}
