/**
 * Tells whether a part's body has the bytes of the body before it. An idle detection stream sends
 * the same reading every second: the same bytes parse to the same levels, so a reader that acts
 * only on a change can drop a repeat before parsing it or building anything for it.
 */

/**
 * Longest body remembered (bytes): a reading is tens of bytes a group. A longer body is never
 * taken for a repeat, so that what a stream keeps stays small whatever the device sends.
 */
export const MAX_REMEMBERED_BODY = 4096;
/** Bodies up to this size are compared byte by byte here, longer ones by the native compare. */
const SHORT_COMPARE = 64;

export class RepeatWatch {
  /** The last body's bytes (its own memory, never a view of a chunk), in its first `size` bytes. */
  private last: Buffer | undefined;
  private size = 0;

  /** True when `body` repeats the body seen last; otherwise `body` becomes the one to compare with. */
  repeats(body: Buffer): boolean {
    const last = this.last;
    const size = body.length;
    if (last !== undefined && size === this.size && same(last, body, size)) return true;
    if (size > MAX_REMEMBERED_BODY) {
      this.forget();
      return false;
    }
    // Its own small buffer, kept and written over while bodies keep their size: no allocation per reading.
    if (last === undefined || last.length < size) this.last = Buffer.allocUnsafeSlow(Math.max(size, SHORT_COMPARE));
    body.copy(this.last as Buffer, 0, 0, size);
    this.size = size;
    return false;
  }

  private forget(): void {
    this.last = undefined;
    this.size = 0;
  }
}

function same(last: Buffer, body: Buffer, size: number): boolean {
  if (size > SHORT_COMPARE) return last.compare(body, 0, size, 0, size) === 0;
  for (let i = 0; i < size; i++) if (last[i] !== body[i]) return false;
  return true;
}
