/**
 * The simulated device's reading of a multipart/form-data upload (RFC 7578): its own small
 * parser, bounded in parts and header size, so that the client is never tested against itself.
 */
export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

const MAX_PARTS = 8;
const MAX_PART_HEAD = 4096;

/** The boundary of a multipart/form-data content type, or undefined when it is another type. */
export function formBoundary(contentType: string | string[] | undefined): string | undefined {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (value === undefined || !/^\s*multipart\/form-data\s*;/i.test(value)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

/** The parts of a form body, or undefined when the body is not a well-formed form with this boundary. */
export function parseFormData(contentType: string | string[] | undefined, body: Buffer): FormPart[] | undefined {
  const boundary = formBoundary(contentType);
  if (boundary === undefined) return undefined;
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let at = body.indexOf(delimiter);
  if (at !== 0) return undefined;
  const parts: FormPart[] = [];
  for (;;) {
    at += delimiter.length;
    // `--` after a delimiter closes the form.
    if (body.subarray(at, at + 2).toString('latin1') === '--') return parts;
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n' || parts.length >= MAX_PARTS) return undefined;
    const headEnd = body.indexOf('\r\n\r\n', at + 2);
    if (headEnd < 0 || headEnd - at > MAX_PART_HEAD) return undefined;
    const head = body.toString('utf8', at + 2, headEnd);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headEnd + 4);
    if (next < 0) return undefined;
    const part = readHead(head);
    if (!part) return undefined;
    parts.push({ ...part, data: body.subarray(headEnd + 4, next) });
    at = next + 2;
  }
}

function readHead(head: string): Omit<FormPart, 'data'> | undefined {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === 'content-disposition') disposition = line.slice(colon + 1).trim();
    if (name === 'content-type') contentType = line.slice(colon + 1).trim();
  }
  if (disposition === undefined || !/^form-data\s*;/i.test(disposition)) return undefined;
  const field = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
  if (field === undefined) return undefined;
  const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
  return { name: field, ...(filename !== undefined && { filename }), ...(contentType !== undefined && { contentType }) };
}

/** The first part that carries a file (has a file name and bytes). */
export function filePart(parts: readonly FormPart[] | undefined): FormPart | undefined {
  return parts?.find((p) => p.filename !== undefined && p.filename !== '' && p.data.length > 0);
}
