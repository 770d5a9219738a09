/**
 * A fake device over a real socket that answers as the worst device would (issue 18): plate
 * pages of big fields forever, edge record pages of 400 records when 99 were asked, a
 * 4-million-element XML answer, a `count(*)` of 12 digits, and binary files holding invalid UTF-8.
 * It counts what it sent, so that a test can tell a walk stopped early.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostileSettings {
  /** Plates per GetLicensePlates page, whatever maxResult asks (default 100). */
  platesPerPage: number;
  /** Bytes of every text field of a plate (number, group included; default 16). */
  plateFieldBytes: number;
  /** Bytes of the owner field alone, when it is bigger than the rest (default: plateFieldBytes). */
  ownerBytes?: number;
  /** Records per edgerecord page, whatever limit asks (default 400). */
  recordsPerPage: number;
  /** Bytes of each text field of an edge record besides its times (default 16). */
  recordFieldBytes: number;
  /** The `count(*)` line's value (default `99999`). */
  recordCount: string;
  /** Elements of the GetDeviceInfo answer (default 4,000,000: about 30 MiB). */
  infoElements: number;
  /** What a download and a backup answer. */
  file: Buffer;
}

export interface HostileDevice {
  readonly port: number;
  settings: HostileSettings;
  /** Requests per path (without query) and bytes of answer bodies sent. */
  readonly requests: Map<string, number>;
  bytesSent: number;
  /** Called at each request before it is answered (e.g. to sample the heap between pages). */
  onRequest?: () => void;
  reset(): void;
  close(): Promise<void>;
}

const DEFAULTS: HostileSettings = {
  platesPerPage: 100,
  plateFieldBytes: 16,
  recordsPerPage: 400,
  recordFieldBytes: 16,
  recordCount: '99999',
  infoElements: 4_000_000,
  file: Buffer.alloc(0),
};

/** `prefix` and digits of `n`, padded with `x` to `bytes` (at least the prefix and digits). */
function filled(prefix: string, n: number, bytes: number): string {
  const head = `${prefix}${n}`;
  return head.length >= bytes ? head : head + 'x'.repeat(bytes - head.length);
}

function platePage(s: HostileSettings, resultOffset: number): string {
  const parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n<config version="2.1.0" xmlns="http://www.ipc.com/ver10"><licensePlates type="list" count="', String(s.platesPerPage), '">'];
  const field = (name: string, value: string): string => `<${name} type="string"><![CDATA[${value}]]></${name}>`;
  for (let i = 0; i < s.platesPerPage; i++) {
    const n = resultOffset + i;
    parts.push(
      // Eleven elements an item, as some firmware sends (index and list type besides the eight fields).
      '<item>',
      `<index type="uint32">${i + 1}</index>`,
      '<listType type="string">white</listType>',
      field('licensePlateNumber', filled('P', n, s.plateFieldBytes)),
      field('groupId', filled('G', n, s.plateFieldBytes)),
      field('beginTime', filled('B', n, s.plateFieldBytes)),
      field('endTime', filled('E', n, s.plateFieldBytes)),
      field('licensePlateType', filled('T', n, s.plateFieldBytes)),
      field('carOwner', filled('O', n, s.ownerBytes ?? s.plateFieldBytes)),
      field('cardNumber', filled('C', n, s.plateFieldBytes)),
      field('telephone', filled('T', n, s.plateFieldBytes)),
      '</item>',
    );
  }
  parts.push('</licensePlates></config>');
  return parts.join('');
}

/** `YYYY-MM-DD HH:MM:SS` `seconds` after `from` (UTC arithmetic on device time). */
function later(from: string, seconds: number): string {
  const d = new Date(`${from.replace(' ', 'T')}Z`);
  d.setUTCSeconds(d.getUTCSeconds() + seconds);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** A page of records, one a second from `from` on (up to `to`, when given): without `to`, paging forward never ends. */
function recordPage(s: HostileSettings, from: string, to: string | null): string {
  const lines: string[] = [`count(*)=${s.recordCount}`];
  for (let i = 0; i < s.recordsPerPage; i++) {
    const start = later(from, i);
    if (to !== null && start > to) break;
    const id = Date.parse(`${start.replace(' ', 'T')}Z`) / 1000;
    const b = s.recordFieldBytes;
    lines.push(
      `Name=${filled('N', id, b)}`,
      `RecordID=${filled('R', id, b)}`,
      `StartTime=${start}`,
      `StopTime=${later(start, 1)}`,
      'Duration=1',
      `TriggerType=${filled('T', id, b)}`,
      `RecordingType=${filled('R', id, b)}`,
      'Complete=yes',
      `StorageType=${filled('S', id, b)}`,
      `MediaType=${filled('M', id, b)}`,
    );
  }
  return lines.join('\r\n') + '\r\n';
}

/** `<config>` holding `elements - 1` tiny elements, 8 bytes each. */
function manyElements(elements: number): Buffer {
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n<config>';
  const tail = '</config>';
  const unit = Buffer.from('<a>1</a>');
  const out = Buffer.alloc(head.length + (elements - 1) * unit.length + tail.length);
  out.write(head, 0, 'latin1');
  let at = head.length;
  for (let i = 1; i < elements; i++) at += unit.copy(out, at);
  out.write(tail, at, 'latin1');
  return out;
}

export async function startHostileDevice(settings: Partial<HostileSettings> = {}): Promise<HostileDevice> {
  let info: { elements: number; body: Buffer } | undefined;
  const device = {
    port: 0,
    settings: { ...DEFAULTS, ...settings },
    requests: new Map<string, number>(),
    bytesSent: 0,
    onRequest: undefined as (() => void) | undefined,
    reset(): void {
      this.requests.clear();
      this.bytesSent = 0;
    },
    close: async (): Promise<void> => undefined,
  };
  const send = (res: ServerResponse, type: string, body: string | Buffer): void => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    device.bytesSent += bytes.length;
    res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) });
    res.end(bytes);
  };
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://device');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    device.requests.set(url.pathname, (device.requests.get(url.pathname) ?? 0) + 1);
    device.onRequest?.();
    const s = device.settings;
    if (url.pathname === '/GetLicensePlates') {
      const offset = Number(/<resultOffset[^>]*>(\d+)</.exec(body)?.[1] ?? '1');
      return send(res, 'application/xml; charset=utf-8', platePage(s, offset));
    }
    if (url.pathname === '/GetDeviceInfo') {
      if (info?.elements !== s.infoElements) info = { elements: s.infoElements, body: manyElements(s.infoElements) };
      return send(res, 'application/xml; charset=utf-8', info.body);
    }
    if (url.pathname === '/cgi-bin/admin/edgerecord') {
      return send(res, 'text/plain', recordPage(s, url.searchParams.get('fromdate') ?? '2026-01-01 00:00:00', url.searchParams.get('todate')));
    }
    if (url.pathname === '/cgi-bin/admin/backup' || url.pathname.startsWith('/ns/')) {
      return send(res, 'application/octet-stream', s.file);
    }
    res.writeHead(404, { 'content-length': '0' });
    res.end();
  };
  const server: Server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  device.port = (server.address() as AddressInfo).port;
  device.close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return device;
}
