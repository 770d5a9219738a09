/**
 * Content types this library hands on. A device's Content-Type header is its word, not a fact:
 * a camera (or whoever answers in its place) that labels a page with a script as an image gets
 * it served as such by any flow that copies `msg.contentType` into an HTTP response. So a picture's
 * type is read from its bytes, and any other type passes only from a short list of types a
 * browser never runs as a document.
 */

export type ImageType = 'image/jpeg' | 'image/png';

const JPEG_SIGNATURE = Buffer.from([0xff, 0xd8, 0xff]);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** JPEG EOI marker; the PNG IEND chunk (length 0, type, CRC). */
const JPEG_END = Buffer.from([0xff, 0xd9]);
const PNG_END = Buffer.from([0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
/** Bytes after the end marker some firmware pads with (NUL, CR, LF, blanks) that are still read as the end. */
const TRAILER_MAX = 32;

/** The type a picture's first bytes name (more than the signature itself), or undefined. */
export function imageSignature(bytes: Buffer): ImageType | undefined {
  if (bytes.length > JPEG_SIGNATURE.length && bytes.subarray(0, JPEG_SIGNATURE.length).equals(JPEG_SIGNATURE)) return 'image/jpeg';
  if (bytes.length > PNG_SIGNATURE.length && bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'image/png';
  return undefined;
}

/**
 * What a whole picture is by its bytes: `type` when it starts with a JPEG or PNG signature and
 * ends with that format's end marker; otherwise `problem` says what it is not, in our words.
 */
export function checkImage(bytes: Buffer): { type: ImageType } | { problem: string } {
  if (bytes.length === 0) return { problem: 'an empty body' };
  const type = imageSignature(bytes);
  if (type === undefined) return { problem: 'bytes that are neither a JPEG nor a PNG' };
  if (!endsWith(bytes, type === 'image/jpeg' ? JPEG_END : PNG_END)) return { problem: `a ${type === 'image/jpeg' ? 'JPEG' : 'PNG'} cut short (no end marker)` };
  return { type };
}

function endsWith(bytes: Buffer, end: Buffer): boolean {
  let last = bytes.length;
  while (last > 0 && bytes.length - last < TRAILER_MAX && isPadding(bytes[last - 1]!)) last--;
  return last >= end.length && bytes.subarray(last - end.length, last).equals(end);
}

function isPadding(byte: number): boolean {
  return byte === 0x00 || byte === 0x0a || byte === 0x0d || byte === 0x20;
}

/**
 * Types a download may be handed on as: pictures, video, audio, plain text and archives, none of
 * which a browser runs as a page. Not SVG, HTML, XML or script, whatever the device says.
 */
export const HANDED_ON_TYPES: ReadonlySet<string> = new Set([
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/bmp',
  'video/mp4',
  'video/x-msvideo',
  'video/avi',
  'video/mpeg',
  'video/mp2t',
  'video/quicktime',
  'video/x-matroska',
  'audio/basic',
  'audio/mpeg',
  'audio/wav',
  'audio/x-wav',
  'audio/aac',
  'text/plain',
  'application/x-tar',
  'application/tar',
]);
export const FALLBACK_TYPE = 'application/octet-stream';

/** The bare type (no parameters, lower case) of a Content-Type value if the list holds it, else `application/octet-stream`. */
export function handedOnType(given: string | undefined): string {
  const type = (given ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return HANDED_ON_TYPES.has(type) ? type : FALLBACK_TYPE;
}
