import { createHash } from 'node:crypto';
import { int, withDefault } from '../input/params';

/** Keys kept at most: far above the plates a site reads within any window. */
export const DEDUP_MAX_KEYS = 10_000;
/** Longest window a plate event node's Dedup setting may hold (s): a day. */
export const DEDUP_WINDOW_MAX_S = 86_400;
/** A plate event node's Dedup setting (s): 0, the default, reports every post. */
export const DEDUP_SETTING = withDefault(int({ min: 0, max: DEDUP_WINDOW_MAX_S }), 0);
/** Longer keys (a sender can post any mac or plate text) are kept as a digest of fixed size. */
const KEY_MAX_CHARS = 256;
/** Starts every digest key: a control character no plain key of that length can mimic by chance. */
const DIGEST_MARK = '\u0001';

/**
 * Suppresses repeats of the same key within a window counted from its first report: A-B-A
 * inside the window reports A once. Memory is bounded by design: expired keys are pruned as it
 * goes, at most `maxKeys` are kept (the oldest leave first, so a flood of distinct keys can only
 * make a repeat be reported again, never grow the map), and each key is at most a few hundred
 * characters.
 */
export class DedupWindow {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = DEDUP_MAX_KEYS,
  ) {}

  /** True when the key should be reported now. */
  admit(key: string, now = Date.now()): boolean {
    if (this.windowMs <= 0) return true;
    const stored = key.length > KEY_MAX_CHARS ? DIGEST_MARK + createHash('sha256').update(key).digest('base64') : key;
    const first = this.seen.get(stored);
    if (first !== undefined && now - first < this.windowMs) return false;
    this.seen.delete(stored); // re-insert: the map stays ordered oldest first
    this.seen.set(stored, now);
    this.prune(now);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [key, first] of this.seen) {
      if (now - first < this.windowMs && this.seen.size <= this.maxKeys) break;
      this.seen.delete(key);
    }
  }
}
