import type { ServerResponse } from 'node:http';
import { buildXml, parseXml, XML_NS, type XmlElement } from '../xml/codec';

/** Answers of the simulated device, in the shapes real firmware uses. */
export function sendText(res: ServerResponse, status: number, text: string, contentType = 'text/plain'): void {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

export function sendXml(res: ServerResponse, status: number, xmlText: string): void {
  sendText(res, status, xmlText, 'application/xml; charset=utf-8');
}

export function sendBuffer(res: ServerResponse, status: number, body: Buffer, contentType: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
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
