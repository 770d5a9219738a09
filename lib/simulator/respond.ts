import type { ServerResponse } from 'node:http';
import { buildXml, parseXml, XML_NS, type XmlElement } from '../xml/codec';

/** Answers that end when the connection closes (see `answerAsHttp10`). */
const CLOSE_DELIMITED = new WeakSet<ServerResponse>();

/**
 * Makes this answer an `HTTP/1.0` one without Content-Length, whose body ends when the device
 * closes the connection: what the small web servers of many cameras send.
 */
export function answerAsHttp10(res: ServerResponse): void {
  CLOSE_DELIMITED.add(res);
  res.useChunkedEncodingByDefault = false;
  res.shouldKeepAlive = false;
  const socket = res.socket;
  if (!socket) return;
  // Node writes 'HTTP/1.1' into every status line; the head goes out in the first write.
  const write = socket.write;
  socket.write = function (this: typeof socket, chunk: unknown, ...rest: unknown[]): boolean {
    socket.write = write;
    const head = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    if (Buffer.isBuffer(head) && head.toString('latin1', 0, 9) === 'HTTP/1.1 ') head.write('HTTP/1.0 ', 0, 'latin1');
    return (write as (...args: unknown[]) => boolean).call(socket, head, ...rest);
  } as typeof socket.write;
}

/** Answers of the simulated device, in the shapes real firmware uses. */
export function sendText(res: ServerResponse, status: number, text: string, contentType = 'text/plain'): void {
  sendBuffer(res, status, Buffer.from(text, 'utf8'), contentType);
}

/**
 * Field notes: CGI firmware refuses a command with HTTP 200 and a `# Error: ...` line (CRLF), on
 * every CGI: parameters, outputs, PTZ, I/O.
 */
export function sendRefusal(res: ServerResponse, words: string): true {
  sendText(res, 200, `# Error: ${words}\r\n`);
  return true;
}

export function sendXml(res: ServerResponse, status: number, xmlText: string): void {
  sendText(res, status, xmlText, 'application/xml; charset=utf-8');
}

/** `contentType` undefined: no Content-Type header at all, as some firmware answers. */
export function sendBuffer(res: ServerResponse, status: number, body: Buffer, contentType: string | undefined): void {
  const headers: Record<string, string | number> = contentType === undefined ? {} : { 'content-type': contentType };
  if (!CLOSE_DELIMITED.has(res)) headers['content-length'] = body.length;
  res.writeHead(status, headers);
  res.end(body);
}

/** `<config status="failed" errorCode="N" errorDesc="..."/>`, with HTTP 200 as most firmware does. */
export function sendXmlStatus(res: ServerResponse, errorCode: number, errorDesc: string, httpStatus = 200): void {
  sendXml(
    res,
    httpStatus,
    buildXml({
      name: 'config',
      attrs: { version: '1.0', xmlns: XML_NS, status: errorCode === 0 ? 'success' : 'failed', errorCode, errorDesc },
    }),
  );
}

export function sendXmlSuccess(res: ServerResponse): void {
  sendXmlStatus(res, 0, 'No Error');
}

/** The request document, or undefined after answering errorCode 2 (Invalid XML Format). */
export function xmlBody(res: ServerResponse, body: Buffer): XmlElement | undefined {
  try {
    return parseXml(body);
  } catch {
    sendXmlStatus(res, 2, 'Invalid XML Format');
    return undefined;
  }
}
