/**
 * The nodes that use one device's client. Node-RED closes a flow's nodes together, in flow order,
 * so the device node may close before a stream or action node has stopped its work on the
 * client. The device closes its client only after each registered user has released it and its
 * close work has settled (MQTT's broker/user pattern), or after `maxWait` at most, so that a user
 * that never releases (it was not restarted, or failed) cannot hold a redeploy.
 */
export class DeviceUsers {
  private readonly users = new Set<string>();
  /** Close work still running; settled work leaves at once (users come and go for the device's lifetime). */
  private readonly work = new Set<Promise<unknown>>();
  private wake: (() => void) | undefined;
  private closingStarted = false;

  constructor(private readonly maxWait = 5000) {}

  /** Registers a user by node id; the returned function releases it with its close work. */
  register(userId: string): (settled: Promise<unknown>) => void {
    this.users.add(userId);
    return (settled) => {
      if (!this.users.delete(userId)) return;
      const work = settled.catch(() => undefined).finally(() => this.work.delete(work));
      this.work.add(work);
      if (this.users.size === 0) this.wake?.();
    };
  }

  /**
   * True once the device has begun to close: a node that would reach it through `msg.device`
   * must not start a request on a client about to be closed (Node-RED also stops finding it).
   */
  get closing(): boolean {
    return this.closingStarted;
  }

  /** Resolves once every user has released and its close work has settled, or after `maxWait`. */
  async settled(): Promise<void> {
    this.closingStarted = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.maxWait)));
    const released = this.users.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.wake = resolve));
    await Promise.race([released.then(() => Promise.all(this.work)), deadline]);
    clearTimeout(timer);
    this.wake = undefined;
  }
}
