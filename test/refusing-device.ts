/**
 * A fake CGI device over a real socket that answers in the forms real firmware uses (field
 * notes), written here from those notes and never from the simulator: every refusal is HTTP 200
 * with a `# Error: ...` line (CRLF), a monitor stream refused at its opening is such a 200 too,
 * and parameter lists name the groups the device lacks with one error line each, first, then the
 * groups it has (the first without `root.`), in ISO-8859-1, declared so.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RELAY_REFUSAL = 'Error setting output';
export const PTZ_REFUSAL = 'PTZ command failed';
export const CHECK_REFUSAL = 'Error getting port status';
export const MONITOR_REFUSAL = 'Error -2 starting monitor';
/** The parameters the device has; `Image.I0.Text.String` holds an accented word. */
export const DEVICE_PARAMS: Readonly<Record<string, string>> = {
  'Image.I0.Text.String': 'Entrée',
  'Image.I0.Text.Position': 'top',
  'Network.eth0.IPAddress': '192.168.1.90',
};

export interface RefusingDevice {
  readonly port: number;
  /** Paths with query, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

function answer(res: ServerResponse, text: string, charset?: string): void {
  const body = Buffer.from(text, charset === undefined ? 'utf8' : 'latin1');
  // Small camera web servers: HTTP/1.0-style, the connection closed after the answer.
  res.writeHead(200, { 'content-type': charset === undefined ? 'text/plain' : `text/plain; charset=${charset}`, 'content-length': body.length, connection: 'close' });
  res.end(body);
}

function paramList(url: URL): string {
  const groups = url.searchParams.getAll('group').map((g) => g.replace(/^root\./, ''));
  const has = (g: string): string[] => Object.keys(DEVICE_PARAMS).filter((name) => name === g || name.startsWith(`${g}.`));
  const lacking = groups.filter((g) => has(g).length === 0);
  const found = groups.length === 0 ? Object.keys(DEVICE_PARAMS) : groups.flatMap(has);
  const errors = lacking.map((g) => `# Error: Error -1 getting param in group '${g}'\r\n`).join('');
  // After an error line, the first group comes without `root.`.
  return errors + found.map((name, i) => `${i === 0 && lacking.length > 0 ? '' : 'root.'}${name}=${DEVICE_PARAMS[name] ?? ''}\r\n`).join('');
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://device');
  const path = url.pathname;
  if (path === '/cgi-bin/admin/output' && url.searchParams.has('action')) return answer(res, `# Error: ${RELAY_REFUSAL}\r\n`);
  if (/^\/cgi-bin\/admin\/(input|output)$/.test(path) && url.searchParams.has('check')) return answer(res, `# Error: ${CHECK_REFUSAL}\r\n`);
  if (/^\/cgi-bin\/admin\/(input|output|detection)$/.test(path)) return answer(res, `# Error: ${MONITOR_REFUSAL}\r\n`);
  if (/^\/cgi-bin\/operator\/ptz(set|config)$/.test(path)) return answer(res, `# Error: ${PTZ_REFUSAL}\r\n`);
  if (/^\/cgi-bin\/(view|operator|admin)\/param$/.test(path) && url.searchParams.get('action') === 'list') return answer(res, paramList(url), 'iso-8859-1');
  res.writeHead(404, { 'content-type': 'text/plain', connection: 'close' });
  res.end('Not Found');
}

export async function startRefusingDevice(): Promise<RefusingDevice> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    route(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
