/**
 * The simulated device's backup archive: a plain ustar file (POSIX.1-1988), written and read
 * here with bounds, enough for a believable `application/x-tar` backup of the parameters.
 */
export interface TarEntry {
  name: string;
  data: Buffer;
}

const BLOCK = 512;
const MAX_ENTRIES = 64;

export function writeTar(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  const mtime = Math.floor(Date.now() / 1000);
  for (const entry of entries) {
    const header = Buffer.alloc(BLOCK);
    header.write(entry.name.slice(0, 99), 0, 'utf8');
    header.write('0000644\0', 100, 'latin1');
    header.write('0000000\0', 108, 'latin1');
    header.write('0000000\0', 116, 'latin1');
    header.write(`${entry.data.length.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
    header.write(`${mtime.toString(8).padStart(11, '0')}\0`, 136, 'latin1');
    header.write('        ', 148, 'latin1');
    header.write('0', 156, 'latin1');
    header.write('ustar\0' + '00', 257, 'latin1');
    header.write('root', 265, 'latin1');
    header.write('root', 297, 'latin1');
    header.write(`${checksum(header).toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    blocks.push(header, entry.data, Buffer.alloc((BLOCK - (entry.data.length % BLOCK)) % BLOCK));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}

/** The regular files of a ustar archive, or undefined when it is not one (bad magic or checksum, cut short). */
export function readTar(archive: Buffer): TarEntry[] | undefined {
  const entries: TarEntry[] = [];
  let at = 0;
  while (at + BLOCK <= archive.length && entries.length < MAX_ENTRIES) {
    const header = archive.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) return entries;
    if (header.toString('latin1', 257, 262) !== 'ustar') return undefined;
    const stored = parseInt(header.toString('latin1', 148, 156).replace(/[\0 ]/g, ''), 8);
    const copy = Buffer.from(header);
    copy.write('        ', 148, 'latin1');
    if (stored !== checksum(copy)) return undefined;
    const size = parseInt(header.toString('latin1', 124, 136).replace(/[\0 ]/g, ''), 8);
    if (!Number.isSafeInteger(size) || size < 0 || at + BLOCK + size > archive.length) return undefined;
    const name = header.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const type = header.toString('latin1', 156, 157);
    if (type === '0' || type === '\0') entries.push({ name, data: archive.subarray(at + BLOCK, at + BLOCK + size) });
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries.length > 0 ? entries : undefined;
}

function checksum(header: Buffer): number {
  let sum = 0;
  for (const byte of header) sum += byte;
  return sum;
}
