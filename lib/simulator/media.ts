import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { AUDIO_CONTENT_TYPES, AUDIO_MAX_BYTES, RTSP_PORT_PARAM, RTSP_STREAM_PARAM } from '../ops/media';
import type { Route } from './context';
import { sendText } from './respond';
import type { ServerAuth } from './server-auth';

const MAX_RTSP_CONNECTIONS = 32;
const MAX_RTSP_HEAD = 8 * 1024;
const MAX_RTSP_LOG = 100;
export const SIM_STREAM_NAME = 'live.sdp';

export interface RtspRequestSeen {
  method: string;
  url: string;
  cseq: string | undefined;
  authorization: string | undefined;
  /** The answer's status. */
  status: number;
}

export interface RtspStartOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  auth: ServerAuth;
  params: Map<string, string>;
}

/**
 * The simulated device's audio input (POST /audio_in counts what it hears) and its RTSP port:
 * DESCRIBE answered with an SDP description (H.264 video, G.711 audio) behind the same Basic and
 * Digest as the HTTP side, OPTIONS answered, other methods refused. Bounded: connections, head
 * size, the request log.
 */
export class SimulatedMedia {
  audioPosts = 0;
  audioBytes = 0;
  lastAudioType: string | undefined;
  /** The RTSP port (0 until started). */
  rtspPort = 0;
  /** Reads RTSP requests and never answers (a hung device). */
  rtspSilent = false;
  /** The most recent RTSP requests (at most MAX_RTSP_LOG). */
  readonly rtspRequests: RtspRequestSeen[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private options: RtspStartOptions | undefined;

  /** RTSP connections open now (a client that gives up must close its own). */
  get rtspConnections(): number {
    return this.sockets.size;
  }

  readonly route: Route = (ctx) => {
    if (ctx.path !== '/audio_in') return false;
    if (ctx.method !== 'POST') {
      sendText(ctx.res, 405, 'Method Not Allowed');
      return true;
    }
    const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (!(AUDIO_CONTENT_TYPES as readonly string[]).includes(type) && !type.startsWith('multipart/')) {
      sendText(ctx.res, 415, 'Unsupported Media Type');
      return true;
    }
    if (ctx.body.length === 0 || ctx.body.length > AUDIO_MAX_BYTES) {
      sendText(ctx.res, 200, '# Error: No audio data\r\n');
      return true;
    }
    this.audioPosts += 1;
    this.audioBytes += ctx.body.length;
    this.lastAudioType = type;
    sendText(ctx.res, 200, 'OK\r\n');
    return true;
  };

  /** Opens the RTSP port and names it (and the stream) in the device parameters. */
  async startRtsp(options: RtspStartOptions): Promise<number> {
    this.options = options;
    const server = createServer((socket) => this.accept(socket));
    server.maxConnections = MAX_RTSP_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.rtspPort = (server.address() as AddressInfo).port;
    options.params.set(RTSP_PORT_PARAM, String(this.rtspPort));
    if (!options.params.has(RTSP_STREAM_PARAM)) options.params.set(RTSP_STREAM_PARAM, SIM_STREAM_NAME);
    return this.rtspPort;
  }

  async closeRtsp(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buffer.length > MAX_RTSP_HEAD) socket.destroy();
          return;
        }
        const head = buffer.toString('latin1', 0, end);
        buffer = buffer.subarray(end + 4);
        if (this.rtspSilent) continue;
        this.answer(socket, head);
      }
    });
  }

  private answer(socket: Socket, head: string): void {
    const [requestLine = '', ...lines] = head.split('\r\n');
    const headers = new Map<string, string[]>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) {
        const name = line.slice(0, colon).trim().toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
      }
    }
    const [method = '', url = '', version = ''] = requestLine.split(' ');
    const cseq = headers.get('cseq')?.[0];
    const authorization = headers.get('authorization')?.[0];
    const reply = (status: number, reason: string, extra: Array<[string, string]> = [], body = ''): void => {
      this.log({ method, url, cseq, authorization, status });
      const out = [`RTSP/1.0 ${status} ${reason}`, ...(cseq !== undefined ? [`CSeq: ${cseq}`] : []), `Date: ${new Date().toUTCString()}`, ...extra.map(([k, v]) => `${k}: ${v}`)];
      if (body !== '') out.push('Content-Type: application/sdp', `Content-Length: ${Buffer.byteLength(body)}`);
      socket.write(out.join('\r\n') + '\r\n\r\n' + body);
    };
    if (!/^RTSP\/1\.0$/.test(version) || cseq === undefined) return reply(400, 'Bad Request');
    if (method === 'OPTIONS') return reply(200, 'OK', [['Public', 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN']]);
    if (method !== 'DESCRIBE') return reply(['SETUP', 'PLAY', 'PAUSE', 'TEARDOWN'].includes(method) ? 455 : 501, 'Not Supported Here');
    const options = this.options as RtspStartOptions;
    const verdict = options.auth.verifyHeader(authorization, method, url);
    if (!verdict.ok) return reply(401, 'Unauthorized', options.auth.challenges(verdict.stale).map((c) => ['WWW-Authenticate', c]));
    const stream = options.params.get(RTSP_STREAM_PARAM) ?? SIM_STREAM_NAME;
    const path = /^rtsp:\/\/[^/]+\/(.*)$/.exec(url)?.[1];
    if (path !== stream) return reply(404, 'Not Found');
    return reply(200, 'OK', [['Content-Base', `${url}/`]], sdpOf(options.host));
  }

  private log(seen: RtspRequestSeen): void {
    this.rtspRequests.push(seen);
    if (this.rtspRequests.length > MAX_RTSP_LOG) this.rtspRequests.splice(0, this.rtspRequests.length - MAX_RTSP_LOG);
  }
}

/** What a camera describes: H.264 video and G.711 mu-law audio, one track each. */
function sdpOf(host: string): string {
  return [
    'v=0',
    `o=- 1 1 IN IP4 ${host}`,
    's=ipcam-simulator',
    'c=IN IP4 0.0.0.0',
    't=0 0',
    'a=control:*',
    'm=video 0 RTP/AVP 96',
    'a=rtpmap:96 H264/90000',
    'a=fmtp:96 packetization-mode=1;profile-level-id=42001f',
    'a=control:trackID=1',
    'm=audio 0 RTP/AVP 0',
    'a=rtpmap:0 PCMU/8000',
    'a=control:trackID=2',
    '',
  ].join('\r\n');
}
