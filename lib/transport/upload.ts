import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

/** One file sent as the single part of a multipart/form-data body (RFC 7578), as a device's own upload page sends it. */
export interface UploadFile {
  /** The form field's name. */
  field: string;
  /** The file name given in the part. */
  filename: string;
  data: Buffer;
  /** The part's type (default `application/octet-stream`). */
  contentType?: string;
}

/** A body as the pieces it is sent in, with its exact length: nothing of the file is copied. */
export interface FramedBody {
  contentType: string;
  pieces: readonly Buffer[];
  length: number;
}

/** Largest slice handed to the socket at once (and the step of the upload progress). */
const PIECE = 64 * 1024;

/**
 * Frames `file` as multipart/form-data around its own Buffer: a small head, the file itself, a
 * small tail. The body is streamed from these, so an upload costs the file once in memory, not
 * a Blob copy plus an encoded copy. The boundary is 128 random bits: the chance that a file
 * holds it is nil.
 */
export function frameUpload(file: UploadFile): FramedBody {
  const boundary = `----ipcam-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(file.field)}"; filename="${escapeName(file.filename)}"\r\n` +
      `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  return { contentType: `multipart/form-data; boundary=${boundary}`, pieces: [head, file.data, tail], length: head.length + file.data.length + tail.length };
}

/** Names in a part header as the HTML standard encodes them: `"`, CR and LF escaped. */
function escapeName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** The pieces as a stream of slices of at most 64 KiB (views, not copies), telling how much has been read. */
export function piecesStream(pieces: readonly Buffer[], onProgress?: (sent: number, total: number) => void): Readable {
  const total = pieces.reduce((sum, p) => sum + p.length, 0);
  let index = 0;
  let offset = 0;
  let sent = 0;
  return new Readable({
    read() {
      while (index < pieces.length && offset >= (pieces[index] as Buffer).length) {
        index += 1;
        offset = 0;
      }
      if (index >= pieces.length) {
        this.push(null);
        return;
      }
      const piece = pieces[index] as Buffer;
      const slice = piece.subarray(offset, offset + PIECE);
      offset += slice.length;
      sent += slice.length;
      this.push(slice);
      onProgress?.(sent, total);
    },
  });
}
