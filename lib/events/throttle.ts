/**
 * Warnings at a bounded rate: the first of a kind is written at once, later ones of that kind
 * within `intervalMs` are only counted, and one summary line per interval reports them. A sender
 * refused a thousand times a second costs a line every interval, not a thousand.
 *
 * Kinds are a small fixed set chosen by the caller (never text from a sender), so the state is
 * bounded by that set.
 */
export class WarningThrottle {
  private readonly kinds = new Map<string, { suppressed: number; last: string | (() => string); timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly intervalMs: number,
  ) {}

  /** `text` may be a function: then it is only called for the lines written (a flood makes no text per message). */
  warn(kind: string, text: string | (() => string)): void {
    if (this.closed) return;
    const state = this.kinds.get(kind);
    if (state) {
      state.suppressed += 1;
      state.last = text;
      return;
    }
    this.kinds.set(kind, { suppressed: 0, last: text, timer: this.timer(kind) });
    this.emit(typeof text === 'string' ? text : text());
  }

  /** Writes the pending summaries and stops every timer; later warnings are dropped. */
  close(): void {
    this.closed = true;
    for (const [kind, state] of this.kinds) {
      clearTimeout(state.timer);
      if (state.suppressed > 0) this.emit(this.summary(state.suppressed, state.last));
      this.kinds.delete(kind);
    }
  }

  private timer(kind: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.flush(kind), this.intervalMs);
    timer.unref();
    return timer;
  }

  /** End of an interval: a summary if any were held back (and a new interval), else quiet again. */
  private flush(kind: string): void {
    const state = this.kinds.get(kind);
    if (!state) return;
    if (state.suppressed === 0) {
      this.kinds.delete(kind);
      return;
    }
    const text = this.summary(state.suppressed, state.last);
    state.suppressed = 0;
    state.timer = this.timer(kind);
    this.emit(text);
  }

  private summary(count: number, last: string | (() => string)): string {
    return `${count} more like this in the last ${formatSeconds(this.intervalMs)}; the last: ${typeof last === 'string' ? last : last()}`;
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The latest of a value at a bounded rate: the first is shown at once, later ones within
 * `intervalMs` only replace the one held, which is shown when the interval ends. A plate status
 * at 100 posts a second costs one status a second (each status goes to every open editor), and
 * the status still ends on the latest plate.
 */
export class LatestThrottle<T> {
  private held: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly show: (value: T) => void,
    private readonly intervalMs: number,
  ) {}

  set(value: T): void {
    if (this.timer) {
      this.held = { value };
      return;
    }
    this.show(value);
    this.timer = setTimeout(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Drops what is held and stops the timer (a newer status of another kind replaces it, or the node closes). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.held = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    const held = this.held;
    this.held = undefined;
    // What was held is shown now and opens a new interval; with nothing held the next is shown at once.
    if (held) this.set(held.value);
  }
}
