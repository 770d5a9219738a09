/**
 * A hostile fake device on raw sockets: each connection it accepts runs one script (HTTP written by
 * hand, so it can drip, lie about sizes and cut anywhere), after the request's head has arrived.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** What a connection does: `request` is the head of the request it got (its first bytes up to the blank line). */
export type Script = (socket: Socket, request: string, index: number) => Promise<void> | void;

export class RawDevice {
  readonly server: Server;
  readonly sockets: Socket[] = [];
  readonly requests: string[] = [];

  constructor(private readonly script: Script) {
    this.server = createServer((socket) => {
      const index = this.sockets.length;
      this.sockets.push(socket);
      socket.on('error', () => undefined);
      let head = '';
      const onData = (chunk: Buffer): void => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        socket.resume();
        this.requests.push(head);
        void Promise.resolve(this.script(socket, head, index)).catch(() => undefined);
      };
      socket.on('data', onData);
    });
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  get open(): number {
    return this.sockets.filter((s) => !s.destroyed).length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Writes `text` a byte at a time, `every` ms apart, until done or the socket goes. */
export async function drip(socket: Socket, text: string, every: number): Promise<void> {
  for (const byte of text) {
    if (socket.destroyed) return;
    socket.write(byte);
    await sleep(every);
  }
}

