/**
 * Suppresses repeats of the same key within a window counted from its first report: A-B-A
 * inside the window reports A once. Memory stays bounded by pruning expired keys as it goes.
 */
export class DedupWindow {
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  /** True when the key should be reported now. */
  admit(key: string, now = Date.now()): boolean {
    if (this.windowMs <= 0) return true;
    const first = this.seen.get(key);
    if (first !== undefined && now - first < this.windowMs) return false;
    this.seen.delete(key); // re-insert: the map stays ordered oldest first
    this.seen.set(key, now);
    this.prune(now);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [key, first] of this.seen) {
      if (now - first < this.windowMs) break;
      this.seen.delete(key);
    }
  }
}
