/**
 * The simulator's WS-Discovery side: it answers Probes as an ONVIF camera does, with a
 * ProbeMatches naming its scopes (name, hardware, location) and its service address. It reads
 * probes its own way (the library's probe builder and answer parser are what is under test).
 *
 * Unicast on a UDP port of its own (any free port by default: tests and the demo send their
 * probe there); with `multicast`, on the discovery port 3702 joined to the group, where the
 * machine allows it. A multicast probe goes to one known port, so "any free port" (0) is refused
 * with `multicast` instead of answering from a port no search reaches.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { WSD_MULTICAST_ADDRESS, WSD_PORT } from '../discovery/wsd';
import type { SimulatedDeviceInfo } from './state';

export interface DiscoveryResponderOptions {
  /** Address to bind the unicast socket (the simulator's host). */
  host: string;
  /** UDP port (default 0: any free port); with `multicast`, 3702 unless given (never 0). */
  port?: number;
  /** Join the WS-Discovery group on 0.0.0.0:3702 (shared with others on the machine). */
  multicast?: boolean;
  /** The web interface the answers point at. */
  httpPort: number;
  protocol: 'http' | 'https';
  device: SimulatedDeviceInfo;
}

/** Longest probe read; anything longer is not a probe. */
const MAX_PROBE = 8 * 1024;

export class DiscoveryResponder {
  /** The UDP port answering probes. */
  port = 0;
  /** True when the socket joined the multicast group. */
  multicast = false;
  /** Probes answered (the control API shows it). */
  answered = 0;
  private socket: Socket | undefined;
  /** The endpoint reference: one per simulated device, as a camera keeps its own. */
  private readonly uuid = randomUUID();

  constructor(private readonly options: DiscoveryResponderOptions) {}

  async start(): Promise<void> {
    if (this.options.multicast) {
      // `??` alone kept a 0 here: the group socket then sat on a random port and no probe reached it.
      if (this.options.port === 0) throw new Error(`a discovery port of 0 (any free port) answers no multicast probe: they go to ${WSD_PORT}`);
      // Where the machine allows: a shared bind of 3702 and the group; else unicast only.
      try {
        await this.bind('0.0.0.0', this.options.port ?? WSD_PORT, true);
        this.socket?.addMembership(WSD_MULTICAST_ADDRESS);
        this.multicast = true;
        return;
      } catch {
        await this.close();
      }
    }
    await this.bind(this.options.host, this.options.port ?? 0, false);
  }

  private async bind(address: string, port: number, reuseAddr: boolean): Promise<void> {
    const socket = createSocket({ type: 'udp4', reuseAddr });
    this.socket = socket;
    socket.on('message', (msg, from) => this.answer(msg, from));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port, address }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.on('error', () => undefined);
    this.port = socket.address().port;
  }

  private answer(msg: Buffer, from: RemoteInfo): void {
    if (msg.length > MAX_PROBE) return;
    const text = msg.toString('utf8');
    if (!/<(\w+:)?Probe[\s>]/.test(text) || !/\/discovery\/Probe</.test(text)) return;
    const messageId = /<(?:\w+:)?MessageID>\s*([^<\s]+)\s*</.exec(text)?.[1];
    const types = /<(?:\w+:)?Types>([^<]*)</.exec(text)?.[1] ?? '';
    const wanted = types.split(/\s+/).filter(Boolean).map((t) => t.slice(t.indexOf(':') + 1));
    if (wanted.some((t) => t !== 'NetworkVideoTransmitter' && t !== 'Device')) return;
    const reply = Buffer.from(this.probeMatches(messageId, this.serviceHost(from)), 'utf8');
    this.answered++;
    this.socket?.send(reply, from.port, from.address, () => undefined);
  }

  /**
   * The host of the service address: the simulator's own, or, answering from the shared
   * multicast socket, the local address the probe came from (the answer leaves from it).
   */
  private serviceHost(from: RemoteInfo): string {
    if (!this.multicast && this.options.host !== '0.0.0.0') return this.options.host;
    const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => i.family === 'IPv4').map((i) => i.address));
    return own.includes(from.address) ? from.address : (own.find((a) => a !== '127.0.0.1') ?? '127.0.0.1');
  }

  /** As cameras write it: SOAP 1.2, WS-Addressing 2004/08, scopes percent-encoded. */
  private probeMatches(relatesTo: string | undefined, host: string): string {
    const d = this.options.device;
    const scope = (path: string): string => `onvif://www.onvif.org/${path}`;
    const scopes = [
      scope('type/video_encoder'),
      scope('type/audio_encoder'),
      scope('type/ptz'),
      scope('Profile/Streaming'),
      scope('Profile/G'),
      scope('Profile/T'),
      scope(`name/${encodeURIComponent(d.deviceName)}`),
      scope(`hardware/${encodeURIComponent(d.model)}`),
      scope('location/country/simulated'),
      scope('location/city/loopback'),
    ].join(' ');
    return (
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" ' +
      'xmlns:wsdd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:tdn="http://www.onvif.org/ver10/network/wsdl" xmlns:tds="http://www.onvif.org/ver10/device/wsdl">' +
      '<SOAP-ENV:Header>' +
      `<wsa:MessageID>uuid:${randomUUID()}</wsa:MessageID>` +
      (relatesTo ? `<wsa:RelatesTo>${escapeXml(relatesTo)}</wsa:RelatesTo>` : '') +
      '<wsa:To SOAP-ENV:mustUnderstand="true">http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</wsa:To>' +
      '<wsa:Action SOAP-ENV:mustUnderstand="true">http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</wsa:Action>' +
      '</SOAP-ENV:Header><SOAP-ENV:Body><wsdd:ProbeMatches><wsdd:ProbeMatch>' +
      `<wsa:EndpointReference><wsa:Address>urn:uuid:${this.uuid}</wsa:Address></wsa:EndpointReference>` +
      '<wsdd:Types>tdn:NetworkVideoTransmitter tds:Device</wsdd:Types>' +
      `<wsdd:Scopes>${escapeXml(scopes)}</wsdd:Scopes>` +
      `<wsdd:XAddrs>${this.options.protocol}://${host}:${this.options.httpPort}/onvif/device_service</wsdd:XAddrs>` +
      '<wsdd:MetadataVersion>1</wsdd:MetadataVersion>' +
      '</wsdd:ProbeMatch></wsdd:ProbeMatches></SOAP-ENV:Body></SOAP-ENV:Envelope>'
    );
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return;
    await new Promise<void>((resolve) => {
      try {
        socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
