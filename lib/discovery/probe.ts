/**
 * One WS-Discovery search over `node:dgram`: the probes go out (multicast, and unicast to any
 * targets given), the answers are read for the search's duration, then the socket is closed.
 *
 * Bounded against the worst LAN: the search ends at its duration (or abort) whatever arrives;
 * a datagram above MAX_ANSWER_BYTES is dropped unread; at most MAX_ANSWERS devices are kept
 * (the search ends early once that many are found); one sender address gets at most
 * PER_ADDRESS_KEPT entries and PER_ADDRESS_PARSED datagrams read, and the whole search at most
 * TOTAL_PARSED: past these budgets a datagram costs a size check and a map lookup, nothing is
 * stored, and the event loop never works on one datagram longer than one bounded parse.
 */
import { createSocket } from 'node:dgram';
import { isIPv4 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { echo } from '../errors/echo';
import { IpcamError, inputError } from '../errors/errors';
import { bool, int, text, withDefault } from '../input/params';
import { buildProbe, httpEndpoint, MAX_ANSWER_BYTES, parseProbeMatches, PROBE_TYPES, WSD_MULTICAST_ADDRESS, WSD_PORT } from './wsd';

/** The search duration setting (seconds). */
export const DISCOVERY_DURATION = withDefault(int({ min: 1, max: 30 }), 5);
/** The Identify setting: each device found is asked who it is (model, firmware, MAC). */
export const DISCOVERY_IDENTIFY = withDefault(bool(), false);
/** Devices kept from one search. */
export const MAX_ANSWERS = 256;
/** Entries one sender address may fill (a recorder, or several simulators on one machine). */
export const PER_ADDRESS_KEPT = 16;
/** Datagrams read from one sender address, and from all senders, in one search. */
export const PER_ADDRESS_PARSED = 64;
export const TOTAL_PARSED = MAX_ANSWERS * 8;
/** Unicast targets of one search. */
export const MAX_TARGETS = 64;
/** The probes are sent again after this long (UDP may lose the first ones). */
const REPEAT_MS = 250;

/** The interface setting: an IPv4 address of this machine, blank = the system's choice. */
export const DISCOVERY_INTERFACE = text({ max: 15, pattern: /^\d{1,3}(\.\d{1,3}){3}$/, patternText: 'an IPv4 address of this machine, e.g. 192.168.1.10' });
/** The targets setting: `address[:port]`, comma-separated. */
export const DISCOVERY_TARGETS = text({ max: MAX_TARGETS * 22, pattern: /^[\d.:,\s]*$/, patternText: 'IPv4 addresses with an optional port, comma-separated, e.g. 192.168.2.20, 192.168.2.21:3702' });

export interface DiscoveryTarget {
  address: string;
  port: number;
}

export interface DiscoveryOptions {
  /** How long to listen for answers (ms). */
  durationMs: number;
  /** Local IPv4 address to send from (the NIC of the multicast); blank = the system's choice. */
  interface?: string;
  /** Send the multicast probe (default true). */
  multicast?: boolean;
  /** Also probe these addresses by unicast (another subnet, or a simulator's own port). */
  targets?: readonly DiscoveryTarget[];
  /** Stop early with this many devices (at most MAX_ANSWERS). */
  maxAnswers?: number;
  signal?: AbortSignal;
}

/** A device that answered, as its answer says; `address` is the datagram's sender. */
export interface DiscoveredDevice {
  address: string;
  /** The web interface's port and protocol (from the service address on the sender's own IP). */
  port: number;
  protocol: 'http' | 'https';
  name?: string;
  hardware?: string;
  location?: string;
  xaddrs: string[];
  endpoint?: string;
}

export interface DiscoveryResult {
  devices: DiscoveredDevice[];
  /** True when the search ended at the answer limit (more may have answered). */
  truncated: boolean;
  /** Datagrams not used: too large, unreadable, past a budget, or repeats. */
  dropped: number;
}

/** Checks the targets text (`a.b.c.d[:port]`, comma-separated); EINPUT naming the first bad one. */
export function parseTargets(value: unknown, field = 'targets'): DiscoveryTarget[] {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return [];
  const list = Array.isArray(value) ? value : [DISCOVERY_TARGETS.parse(value, field)];
  const entries = list.flatMap((v) => (typeof v === 'string' ? v.split(',') : [v])).filter((v) => !(typeof v === 'string' && v.trim() === ''));
  if (entries.length > MAX_TARGETS) throw inputError(`${field} holds at most ${MAX_TARGETS} addresses, got ${entries.length}`);
  return entries.map((entry) => {
    const match = typeof entry === 'string' ? /^\s*([\d.]+)(?::(\d{1,5}))?\s*$/.exec(entry) : null;
    if (!match || !isIPv4(match[1] as string)) throw inputError(`${field}: ${echo(entry)} is not an IPv4 address with an optional port`);
    const port = match[2] === undefined ? WSD_PORT : int({ min: 1, max: 65535 }).parse(match[2], `${field} port`);
    return { address: match[1] as string, port };
  });
}

/** The interface setting checked against this machine's addresses; undefined for blank. */
export function checkInterface(value: unknown): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  const address = DISCOVERY_INTERFACE.parse(value, 'interface');
  const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => i.family === 'IPv4').map((i) => i.address));
  if (!isIPv4(address) || !own.includes(address)) throw inputError(`interface ${echo(address)} is not an IPv4 address of this machine (it has ${own.slice(0, 8).join(', ') || 'none'})`);
  return address;
}

interface SenderBudget {
  parsed: number;
  kept: number;
}

/** Runs one search; resolves at its end with what answered. Never rejects for what a sender does. */
export async function discoverDevices(options: DiscoveryOptions): Promise<DiscoveryResult> {
  const duration = Math.max(0, Math.min(options.durationMs, DISCOVERY_DURATION.limits.type === 'int' ? DISCOVERY_DURATION.limits.max * 1000 : 30_000));
  const maxAnswers = Math.max(1, Math.min(options.maxAnswers ?? MAX_ANSWERS, MAX_ANSWERS));
  const targets = (options.targets ?? []).slice(0, MAX_TARGETS);
  const multicast = options.multicast !== false;
  if (options.signal?.aborted) return { devices: [], truncated: false, dropped: 0 };

  const probes = PROBE_TYPES.map((kind) => buildProbe(kind));
  const messageIds = new Set(probes.map((p) => p.messageId));
  const devices = new Map<string, DiscoveredDevice>();
  const senders = new Map<string, SenderBudget>();
  let parsed = 0;
  let dropped = 0;
  let truncated = false;

  const socket = createSocket({ type: 'udp4', reuseAddr: false });
  // A send or receive error (no route for multicast, ICMP unreachable) ends nothing: the search
  // reports what answered.
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ port: 0, address: options.interface, exclusive: true }, () => {
      socket.off('error', reject);
      resolve();
    });
  }).catch((err: unknown) => {
    socket.close();
    throw new IpcamError('ECONN', `Could not open a UDP socket for the search${options.interface ? ` on ${options.interface}` : ''}`, { cause: err });
  });

  return new Promise<DiscoveryResult>((resolve) => {
    let finished = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener('abort', finish);
      socket.removeAllListeners('message');
      const list = [...devices.values()].sort((a, b) => compareAddress(a.address, b.address) || a.port - b.port);
      // Resolved once the socket is closed: a search leaves nothing open behind it.
      const done = (): void => resolve({ devices: list, truncated, dropped });
      try {
        socket.close(done);
      } catch {
        done();
      }
    };

    socket.on('message', (datagram: Buffer, from) => {
      if (finished) return;
      const budget = senders.get(from.address) ?? { parsed: 0, kept: 0 };
      if (datagram.length > MAX_ANSWER_BYTES || budget.parsed >= PER_ADDRESS_PARSED || parsed >= TOTAL_PARSED) {
        dropped++;
        return;
      }
      // New senders are counted only while there is room: a flood from ever new addresses
      // cannot grow the map past the answers it could fill.
      if (!senders.has(from.address)) {
        if (senders.size >= maxAnswers * 2) {
          dropped++;
          return;
        }
        senders.set(from.address, budget);
      }
      budget.parsed++;
      parsed++;
      let matches;
      try {
        matches = parseProbeMatches(datagram, messageIds);
      } catch {
        dropped++;
        return;
      }
      if (matches.length === 0) dropped++;
      for (const match of matches) {
        const endpoint = httpEndpoint(from.address, match.xaddrs);
        const key = `${from.address}|${endpoint.port}`;
        if (devices.has(key)) {
          dropped++;
          continue;
        }
        if (budget.kept >= PER_ADDRESS_KEPT) {
          dropped++;
          continue;
        }
        budget.kept++;
        devices.set(key, { address: from.address, port: endpoint.port, protocol: endpoint.protocol, ...match });
        if (devices.size >= maxAnswers) {
          truncated = true;
          return finish();
        }
      }
    });

    let multicastReady = false;
    const send = (): void => {
      if (finished) return;
      for (const probe of probes) {
        const bytes = Buffer.from(probe.xml, 'utf8');
        if (multicastReady) socket.send(bytes, WSD_PORT, WSD_MULTICAST_ADDRESS, () => undefined);
        for (const target of targets) socket.send(bytes, target.port, target.address, () => undefined);
      }
    };
    if (multicast) {
      try {
        // WS-Discovery's multicast stays on the link.
        socket.setMulticastTTL(1);
        socket.setMulticastLoopback(true);
        if (options.interface) socket.setMulticastInterface(options.interface);
        multicastReady = true;
      } catch {
        // The chosen interface cannot multicast: the probe never leaves by another one; the
        // targets are still probed.
      }
    }
    options.signal?.addEventListener('abort', finish, { once: true });
    send();
    if (duration > REPEAT_MS * 2) timers.push(setTimeout(send, REPEAT_MS));
    timers.push(setTimeout(finish, duration));
  });
}

/** IPv4 addresses in numeric order. */
function compareAddress(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
