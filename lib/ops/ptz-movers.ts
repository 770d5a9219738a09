import { CgiPtzMover } from './ptz-cgi';
import { PtzMover, type PtzMove } from './ptz-mover';
import type { PtzListEntry } from './ptz-presets';
import { DeviceClient } from '../transport/client';

/** What a PTZ command gave: the action done, and the list of a list command. */
export interface PtzDone {
  action: string;
  list?: PtzListEntry[];
  /** Which list a list command read. */
  kind?: 'presets' | 'tours';
}

type Mover = PtzMover | CgiPtzMover;

/** Keeps a borrowed device's client open until the promise given settles. */
type Hold = () => (settled: Promise<unknown>) => void;

/**
 * The movers of one PTZ node, one per device client: a mover owns the pending Stops of the
 * cameras the node set moving on that device, so a timed Stop goes to the camera that moved. The
 * setting's device keeps its mover; a device reached through msg.device keeps one only while a
 * camera of it moves (or a command is on its way), held open meanwhile, so a redeploy of that
 * device waits for the Stop. The map holds at most one entry per deployed device.
 */
export class PtzMovers {
  private own: { client: DeviceClient; mover: Mover } | undefined;
  /** `uses`: commands working with the mover now (one may be reading caps before its command). */
  private readonly borrowed = new Map<DeviceClient, { mover: Mover; release: (settled: Promise<unknown>) => void; uses: number }>();

  constructor(
    private readonly api: 'xml' | 'cgi',
    private readonly onStopError: (err: unknown) => void,
  ) {}

  /**
   * Sends one command with the mover of `client`. A timed move's answer comes when the move has
   * ended (its Stop answered), so that a move chained on the output never races the Stop.
   */
  async move(client: DeviceClient, request: PtzMove, signal: AbortSignal, device: { borrowed: boolean; hold: Hold }): Promise<PtzDone> {
    const mover = this.moverFor(client, device);
    try {
      if (mover instanceof CgiPtzMover) {
        const command = await mover.move(request, signal, { untilEnded: true });
        return { action: command.action === 'move' ? command.move : command.action };
      }
      const outcome = await mover.move(request, signal, { untilEnded: true });
      return outcome.list ? { action: outcome.action, list: outcome.list, kind: outcome.action === 'listTours' ? 'tours' : 'presets' } : { action: outcome.action };
    } finally {
      // A command that moved nothing (a list, a bad input) leaves a borrowed mover idle.
      if (device.borrowed) {
        const entry = this.borrowed.get(client);
        if (entry?.mover === mover) entry.uses -= 1;
        this.letGo(client);
      }
    }
  }

  /**
   * Stops every camera left moving. Node-RED closes the device node (and its client) in the same
   * stop as the PTZ node: such a Stop goes on a connection of its own. A device reached through
   * msg.device keeps its client until these Stops have gone.
   */
  close(): Promise<void> {
    const movers = [...(this.own ? [this.own] : []), ...[...this.borrowed].map(([client, { mover }]) => ({ client, mover }))];
    const releases = [...this.borrowed.values()].map((entry) => entry.release);
    this.borrowed.clear();
    const closing = Promise.allSettled(
      movers.map(({ client, mover }) => {
        const via = mover.isMoving ? new DeviceClient(client.options) : undefined;
        return mover.close(via).finally(() => via?.close());
      }),
    );
    for (const release of releases) release(closing);
    return closing.then(() => undefined);
  }

  private newMover(client: DeviceClient, onIdle?: () => void): Mover {
    return this.api === 'cgi' ? new CgiPtzMover(client, this.onStopError, onIdle) : new PtzMover(client, this.onStopError, onIdle);
  }

  private moverFor(client: DeviceClient, device: { borrowed: boolean; hold: Hold }): Mover {
    if (!device.borrowed) {
      if (this.own?.client !== client) this.own = { client, mover: this.newMover(client) };
      return this.own.mover;
    }
    let entry = this.borrowed.get(client);
    if (!entry) {
      entry = { mover: this.newMover(client, () => this.letGo(client)), release: device.hold(), uses: 0 };
      this.borrowed.set(client, entry);
    }
    entry.uses += 1;
    return entry.mover;
  }

  private letGo(client: DeviceClient): void {
    const entry = this.borrowed.get(client);
    if (!entry || entry.uses > 0 || !entry.mover.isIdle) return;
    this.borrowed.delete(client);
    entry.release(Promise.resolve());
  }
}
