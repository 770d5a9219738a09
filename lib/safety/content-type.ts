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

/** The type a picture's first bytes name (more than the signature itself), or undefined. */
export function imageSignature(bytes: Buffer): ImageType | undefined {
  if (bytes.length > JPEG_SIGNATURE.length && bytes.subarray(0, JPEG_SIGNATURE.length).equals(JPEG_SIGNATURE)) return 'image/jpeg';
  if (bytes.length > PNG_SIGNATURE.length && bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'image/png';
  return undefined;
}

/**
 * What a picture is by its bytes: `type` when it starts with a JPEG or PNG signature; otherwise
 * `problem` says what it is not, in our words. The end is not checked: firmware that pads or
 * appends data after the JPEG's EOI marker sends pictures every browser shows, and the type, not
 * the completeness, is what keeps a script out of the editor's origin.
 */
export function checkImage(bytes: Buffer): { type: ImageType } | { problem: string } {
  if (bytes.length === 0) return { problem: 'an empty body' };
  const type = imageSignature(bytes);
  if (type === undefined) return { problem: 'bytes that are neither a JPEG nor a PNG' };
  return { type };
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
