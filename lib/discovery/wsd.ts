/**
 * WS-Discovery (the ONVIF flavour, SOAP 1.2 over UDP) as far as a search needs it: the Probe we
 * send and the ProbeMatches answers we read. Answers are untrusted datagrams from anyone on the
 * LAN: every value read is cut to a bound, and nothing a datagram says decides where a request
 * or a credential goes beyond its own sender (see `httpEndpoint`).
 */
import { randomUUID } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { oneLine } from '../errors/echo';
import { parseXml, type XmlElement } from '../xml/codec';

/** The discovery multicast group and port of WS-Discovery (IPv4). */
export const WSD_MULTICAST_ADDRESS = '239.255.255.250';
export const WSD_PORT = 3702;

/**
 * The types probed for: ONVIF cameras announce `NetworkVideoTransmitter`, recorders and some
 * cameras only `Device`. One probe each (a probe names the types a match must all have).
 */
export const PROBE_TYPES = [
  { prefix: 'dn', namespace: 'http://www.onvif.org/ver10/network/wsdl', type: 'NetworkVideoTransmitter' },
  { prefix: 'tds', namespace: 'http://www.onvif.org/ver10/device/wsdl', type: 'Device' },
] as const;

/** Largest answer read: a real ProbeMatches is 1-4 KiB; a larger datagram is dropped unread. */
export const MAX_ANSWER_BYTES = 32 * 1024;
/** Matches read from one answer (a device sends one). */
const MAX_MATCHES_PER_ANSWER = 4;
/** Scopes looked at in one match, service addresses kept. */
const MAX_SCOPES = 64;
const MAX_XADDRS = 4;
/** Longest service address kept, and longest name / hardware / location text. */
const MAX_XADDR_LENGTH = 256;
const MAX_SCOPE_TEXT = 64;

const ONVIF_SCOPE = 'onvif://www.onvif.org/';

/** A Probe with a fresh message id, for one of `PROBE_TYPES`. */
export function buildProbe(kind: (typeof PROBE_TYPES)[number]): { messageId: string; xml: string } {
  const messageId = `uuid:${randomUUID()}`;
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing" ' +
    `xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:${kind.prefix}="${kind.namespace}">` +
    `<s:Header><a:MessageID>${messageId}</a:MessageID><a:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To>` +
    '<a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</a:Action></s:Header>' +
    `<s:Body><d:Probe><d:Types>${kind.prefix}:${kind.type}</d:Types></d:Probe></s:Body></s:Envelope>`;
  return { messageId, xml };
}

/** One ProbeMatch as read, every text bounded. */
export interface ProbeMatch {
  /** The endpoint reference (`urn:uuid:...`), the device's stable id across address changes. */
  endpoint?: string;
  name?: string;
  hardware?: string;
  location?: string;
  /** The service addresses (http/https URLs), at most four. */
  xaddrs: string[];
}

/**
 * The matches of a ProbeMatches answer to one of `messageIds`; an empty list for anything else
 * (another message, another probe's answer, a fault). Throws EPARSE for what is not XML.
 */
export function parseProbeMatches(datagram: Buffer, messageIds: ReadonlySet<string>): ProbeMatch[] {
  const envelope = parseXml(datagram);
  if (localName(envelope.name) !== 'Envelope') return [];
  const relatesTo = childByLocal(childByLocal(envelope, 'Header'), 'RelatesTo')?.text;
  // An answer to another search (or a Hello) is not ours; a device that leaves RelatesTo out is
  // still answering the probe that reached it, at our port.
  if (relatesTo !== undefined && !messageIds.has(relatesTo.trim())) return [];
  const matches = childByLocal(childByLocal(envelope, 'Body'), 'ProbeMatches');
  if (!matches) return [];
  const out: ProbeMatch[] = [];
  for (const match of matches.children) {
    if (out.length >= MAX_MATCHES_PER_ANSWER) break;
    if (localName(match.name) !== 'ProbeMatch') continue;
    out.push(readMatch(match));
  }
  return out;
}

function readMatch(match: XmlElement): ProbeMatch {
  const endpoint = childByLocal(childByLocal(match, 'EndpointReference'), 'Address')?.text;
  const scopes = readScopes(childByLocal(match, 'Scopes')?.text ?? '');
  const xaddrs = readXaddrs(childByLocal(match, 'XAddrs')?.text ?? '');
  const out: ProbeMatch = { xaddrs, ...scopes };
  const id = endpoint === undefined ? '' : oneLine(endpoint, 128);
  if (id !== '') out.endpoint = id;
  return out;
}

/** The first `max` words of a space-separated list, without splitting all of a long text. */
function words(text: string, max: number): string[] {
  const out: string[] = [];
  const pattern = /\S+/g;
  let m: RegExpExecArray | null;
  while (out.length < max && (m = pattern.exec(text)) !== null) out.push(m[0]);
  return out;
}

/**
 * The ONVIF scopes `name/`, `hardware/` and `location/...` (several locations joined by ', '),
 * percent-decoded, on one line, each at most 64 characters.
 */
export function readScopes(text: string): Pick<ProbeMatch, 'name' | 'hardware' | 'location'> {
  const out: Pick<ProbeMatch, 'name' | 'hardware' | 'location'> = {};
  const locations: string[] = [];
  for (const scope of words(text, MAX_SCOPES)) {
    if (scope.length > 512 || scope.slice(0, ONVIF_SCOPE.length).toLowerCase() !== ONVIF_SCOPE) continue;
    const rest = scope.slice(ONVIF_SCOPE.length);
    const slash = rest.indexOf('/');
    if (slash < 0) continue;
    const key = rest.slice(0, slash).toLowerCase();
    const value = scopeText(rest.slice(slash + 1));
    if (value === '') continue;
    if (key === 'name' && out.name === undefined) out.name = value;
    else if (key === 'hardware' && out.hardware === undefined) out.hardware = value;
    else if (key === 'location' && locations.length < 4) locations.push(value);
  }
  if (locations.length > 0) out.location = oneLine(locations.join(', '), MAX_SCOPE_TEXT);
  return out;
}

function scopeText(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    decoded = raw;
  }
  return oneLine(decoded, MAX_SCOPE_TEXT);
}

/** The http and https service addresses, normalised, at most four. */
export function readXaddrs(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text, MAX_XADDRS * 4)) {
    if (out.length >= MAX_XADDRS) break;
    if (word.length > MAX_XADDR_LENGTH) continue;
    const url = safeUrl(word);
    if (url && !out.includes(url.href)) out.push(url.href);
  }
  return out;
}

function safeUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') return undefined;
    return url;
  } catch {
    return undefined;
  }
}

/**
 * Where the sender's web interface is: the protocol and port of its first service address on
 * the sender's own IP, else http on port 80. A service address naming another host is shown but
 * never used: a datagram cannot send our requests (or a password) to a third machine.
 */
export function httpEndpoint(sender: string, xaddrs: readonly string[]): { protocol: 'http' | 'https'; port: number } {
  for (const xaddr of xaddrs) {
    const url = safeUrl(xaddr);
    if (!url || url.hostname !== sender || !isIPv4(url.hostname)) continue;
    const protocol = url.protocol === 'https:' ? 'https' : 'http';
    return { protocol, port: url.port === '' ? (protocol === 'https' ? 443 : 80) : Number(url.port) };
  }
  return { protocol: 'http', port: 80 };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function childByLocal(el: XmlElement | undefined, name: string): XmlElement | undefined {
  return el?.children.find((c) => localName(c.name) === name);
}
