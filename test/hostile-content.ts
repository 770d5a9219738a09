/** What a device that lies about its content sends, and what must come of it (issue 18: content is what it claims). */
import { SNAPSHOT_JPEG } from '../lib/simulator/images';

/** A real 1x1 PNG (signature, IHDR, IDAT, IEND). */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** An SVG that reads `/flows` and deploys a flow when a browser opens it in the editor's origin. */
export const HOSTILE_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/flows").then(r=>r.json()).then(f=>fetch("/flows",{method:"POST",headers:{"content-type":"application/json"},body:JSON.stringify(f)}))</script></svg>',
);
export const HOSTILE_HTML = Buffer.from('<!DOCTYPE html><html><body><script>document.title="owned"</script></body></html>');

/** What a lying camera answers to a snapshot request, and what must come of it. */
export const SNAPSHOT_LIES: Array<{ what: string; contentType?: string; body: Buffer; expect: 'image/jpeg' | 'image/png' | 'EPARSE' }> = [
  { what: 'an SVG with a script, labelled image/svg+xml', contentType: 'image/svg+xml', body: HOSTILE_SVG, expect: 'EPARSE' },
  { what: 'an SVG with a script, labelled image/jpeg', contentType: 'image/jpeg', body: HOSTILE_SVG, expect: 'EPARSE' },
  { what: 'an HTML page, labelled text/html', contentType: 'text/html', body: HOSTILE_HTML, expect: 'EPARSE' },
  { what: 'an HTML page, labelled image/png', contentType: 'image/png', body: HOSTILE_HTML, expect: 'EPARSE' },
  { what: 'an empty body, labelled image/jpeg', contentType: 'image/jpeg', body: Buffer.alloc(0), expect: 'EPARSE' },
  { what: 'the JPEG signature alone', contentType: 'image/jpeg', body: SNAPSHOT_JPEG.subarray(0, 3), expect: 'EPARSE' },
  { what: 'a JPEG with 4 KiB appended after its end (firmware that pads)', contentType: 'image/jpeg', body: Buffer.concat([SNAPSHOT_JPEG, Buffer.alloc(4096, 0x41)]), expect: 'image/jpeg' },
  { what: 'a JPEG labelled image/png', contentType: 'image/png', body: SNAPSHOT_JPEG, expect: 'image/jpeg' },
  { what: 'a PNG labelled image/jpeg', contentType: 'image/jpeg', body: TINY_PNG, expect: 'image/png' },
  { what: 'a PNG labelled text/html', contentType: 'text/html', body: TINY_PNG, expect: 'image/png' },
  { what: 'a JPEG without a content type', body: SNAPSHOT_JPEG, expect: 'image/jpeg' },
  { what: 'a JPEG with CR LF padding after its end', contentType: 'image/jpeg', body: Buffer.concat([SNAPSHOT_JPEG, Buffer.from('\r\n')]), expect: 'image/jpeg' },
];

/** Device content types of a download and what is handed on. */
export const DOWNLOAD_TYPES: Array<[string, string]> = [
  ['text/html', 'application/octet-stream'],
  ['text/html; charset=utf-8', 'application/octet-stream'],
  ['image/svg+xml', 'application/octet-stream'],
  ['application/javascript', 'application/octet-stream'],
  ['text/javascript', 'application/octet-stream'],
  ['application/xhtml+xml', 'application/octet-stream'],
  ['text/xml', 'application/octet-stream'],
  ['application/pdf', 'application/octet-stream'],
  ['multipart/x-mixed-replace; boundary=x', 'application/octet-stream'],
  ['image/jpeg', 'image/jpeg'],
  ['IMAGE/PNG', 'image/png'],
  ['video/mp4', 'video/mp4'],
  ['audio/basic', 'audio/basic'],
  ['text/plain; charset=iso-8859-1', 'text/plain'],
  ['application/x-tar', 'application/x-tar'],
];
