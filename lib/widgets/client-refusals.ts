/**
 * Refused browser messages of one widget: every one counted, and at most one warning per client
 * per interval (a minute), which says how many more were dropped since that client's last one.
 * A client sending a thousand bad messages a second costs a line a minute, and a thousand clients
 * cost no more than MAX_CLIENTS lines a minute: beyond that many, new clients share one entry.
 * No timer: the count held back is told with that client's next warning.
 */

/** One warning per client per this many ms. */
export const REFUSAL_WARN_MS = 60_000;
/** Clients followed one by one; the others share one entry (and one warning a minute). */
export const REFUSAL_MAX_CLIENTS = 64;

const OTHERS = '\u0000others';

export interface RefusalLogOptions {
  intervalMs?: number;
  maxClients?: number;
  now?: () => number;
}

export class RefusalLog {
  /** Every refused message since the widget started. */
  total = 0;
  private readonly clients = new Map<string, { next: number; held: number }>();
  private readonly intervalMs: number;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(
    private readonly warn: (text: string) => void,
    options: RefusalLogOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? REFUSAL_WARN_MS;
    this.maxClients = options.maxClients ?? REFUSAL_MAX_CLIENTS;
    this.now = options.now ?? Date.now;
  }

  /**
   * One refused message of `client` (its connection id), described by `who` (id and address, for
   * the log) and `reason` (our words, never the message's own text).
   */
  refuse(client: string, who: string, reason: string): void {
    this.total += 1;
    const now = this.now();
    let key = client;
    if (!this.clients.has(key) && this.clients.size >= this.maxClients) {
      for (const [k, entry] of this.clients) if (entry.next <= now) this.clients.delete(k);
      if (this.clients.size >= this.maxClients) key = OTHERS;
    }
    const entry = this.clients.get(key);
    if (entry && now < entry.next) {
      entry.held += 1;
      return;
    }
    const held = entry?.held ?? 0;
    this.clients.set(key, { next: now + this.intervalMs, held: 0 });
    const from = key === OTHERS ? 'dashboard clients beyond the first ' + this.maxClients : `dashboard client ${who}`;
    const more = held > 0 ? ` (${held} more dropped since the last warning)` : '';
    this.warn(`message of ${from} dropped: ${reason}; nothing was sent to the flow or the device${more}`);
  }
}
