/**
 * RTSP DESCRIBE (RFC 2326) over a plain TCP socket, answering Basic or Digest with the same
 * `DeviceAuth` as the HTTP client (the Digest `uri` is the RTSP URL). One socket per call (a
 * second one only when the device closes after its 401), always destroyed at the end: answer,
 * error, timeout or abort. Answers are bounded in size; CSeq is checked.
 *
 * RTSP here is never encrypted, so the credentials keep at least the protection the device node
 * asks for (`rtspAuthMode`): a node on https gets Digest only (the password itself never crosses
 * the wire), a node on http the scheme its auth setting allows, as over HTTP.
 */
import { connect, isIPv6, type Socket } from 'node:net';
import { IpcamError } from '../errors/errors';
import type { AuthMode } from './auth';
import { DeviceAuth } from './auth';
import { parseChallenges } from './challenge';
import { transportError } from './transport-error';

/** Largest status line and headers of an answer. */
export const RTSP_MAX_HEAD = 16 * 1024;
/** Largest body (an SDP description is a few hundred bytes). */
export const RTSP_MAX_BODY = 64 * 1024;
const USER_AGENT = 'node-red-contrib-ipcam';

export interface RtspAnswer {
  status: number;
  /** Header values by lower-case name, repeated headers kept in order. */
  headers: Record<string, string[]>;
  body: Buffer;
}

/**
 * The scheme RTSP may answer for a device node: over plain TCP, Basic would send the password in
 * clear, which a node on https never does; so https means Digest only, whatever its auth
 * setting. A node on http already lets HTTP send Basic when its setting allows: RTSP follows it.
 */
export function rtspAuthMode(device: { protocol: 'http' | 'https'; auth: AuthMode }): AuthMode {
  return device.protocol === 'https' ? 'digest' : device.auth;
}

export interface DescribeOptions {
  /** The device's own host (the device node's), never one a message chose. */
  host: string;
  /** The device's own RTSP port (its parameter), never one a message chose. */
  port: number;
  /** The stream name: the path after the port, without a leading `/` (checked by the caller). */
  stream: string;
  /** What the device node asks of its credentials: its protocol and auth setting (`rtspAuthMode`). */
  device: { protocol: 'http' | 'https'; auth: AuthMode };
  username: string;
  password: string;
  /** The whole exchange, connect to last byte (ms). */
  timeout: number;
  signal?: AbortSignal;
}

export function rtspUrl(host: string, port: number, stream: string): string {
  return `rtsp://${isIPv6(host) ? `[${host}]` : host}:${port}/${stream}`;
}

/** Sends DESCRIBE for the stream and gives the final answer (after any authentication round). */
export async function rtspDescribe(opts: DescribeOptions): Promise<{ url: string; answer: RtspAnswer }> {
  const url = rtspUrl(opts.host, opts.port, opts.stream);
  const target = `${url} (DESCRIBE)`;
  const session = new RtspSession(opts.host, opts.port, target);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IpcamError('ETIMEOUT', `No answer in time from ${target}`)), opts.timeout);
    onAbort = () => reject(new IpcamError('ECONN', `Request to ${target} was aborted`));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const mode = rtspAuthMode(opts.device);
  const auth = new DeviceAuth(mode, { username: opts.username, password: opts.password });
  const work = describe(session, url, auth, opts.device.protocol === 'https');
  // The loser of the race settles later (the destroyed socket ends it): nobody waits for it.
  work.catch(() => undefined);
  stopped.catch(() => undefined);
  try {
    return { url, answer: await Promise.race([work, stopped]) };
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    session.destroy();
  }
}

/** `digestOnly`: the device node is on https, so a Basic-only server is told why it gets nothing. */
async function describe(session: RtspSession, url: string, auth: DeviceAuth, digestOnly: boolean): Promise<RtspAnswer> {
  let refused = 0;
  for (let attempt = 1; ; attempt++) {
    const { header, ticket } = auth.authorize('DESCRIBE', url);
    const answer = await session.request('DESCRIBE', url, { Accept: 'application/sdp', ...(header !== undefined && { Authorization: header }) });
    if (answer.status !== 401) return answer;
    if (ticket.scheme !== 'none') refused += 1;
    const challenges = answer.headers['www-authenticate'];
    try {
      auth.challenged(challenges, ticket);
    } catch (err) {
      if (digestOnly && err instanceof IpcamError && ticket.scheme === 'none' && parseChallenges(challenges).some((c) => c.scheme === 'basic')) {
        throw new IpcamError(
          'EAUTH',
          "The device's RTSP server asks for Basic authentication, which would send the password in clear while the device node uses https: only Digest is answered over RTSP, and nothing was sent",
          { status: 401 },
        );
      }
      throw err;
    }
    // As over HTTP: no credentials -> challenge answered -> one stale-nonce renewal, never more.
    if (attempt >= 3 || refused >= 2) throw new IpcamError('EAUTH', 'The device keeps refusing the credentials', { status: 401 });
  }
}

/** One RTSP connection and the answers read from it, in order. */
class RtspSession {
  private socket: Socket | undefined;
  private buffer = Buffer.alloc(0);
  private ended = false;
  private failure: IpcamError | undefined;
  private wake: (() => void) | undefined;
  private cseq = 0;
  private destroyed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly target: string,
  ) {}

  async request(method: string, url: string, headers: Record<string, string>): Promise<RtspAnswer> {
    if (this.destroyed) throw new IpcamError('ECONN', `Request to ${this.target} was aborted`);
    const socket = this.socket && !this.ended && !this.socket.destroyed ? this.socket : this.open();
    const cseq = ++this.cseq;
    const lines = [`${method} ${url} RTSP/1.0`, `CSeq: ${cseq}`, `User-Agent: ${USER_AGENT}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(lines.join('\r\n') + '\r\n\r\n');
    for (;;) {
      const answer = this.take();
      if (answer) {
        const got = answer.headers['cseq']?.[0]?.trim();
        if (got !== undefined && got !== String(cseq)) throw new IpcamError('EPARSE', `The answer from ${this.target} is for another request (CSeq ${got.slice(0, 12)}, sent ${cseq})`);
        if ((answer.headers['connection']?.[0] ?? '').toLowerCase().includes('close')) this.closeSocket();
        return answer;
      }
      if (this.failure) throw this.failure;
      if (this.ended) throw new IpcamError('ECONN', `Connection closed by ${this.target} before its answer`);
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  destroy(): void {
    this.destroyed = true;
    this.closeSocket();
  }

  private open(): Socket {
    this.closeSocket();
    this.buffer = Buffer.alloc(0);
    this.ended = false;
    this.failure = undefined;
    const socket = connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.buffer.length + chunk.length > RTSP_MAX_HEAD + RTSP_MAX_BODY) {
        this.fail(new IpcamError('EPARSE', `The answer from ${this.target} is larger than ${RTSP_MAX_HEAD + RTSP_MAX_BODY} bytes`));
        socket.destroy();
        return;
      }
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.notify();
    });
    socket.on('error', (err) => this.fail(transportError(err, { target: this.target })));
    socket.on('close', () => {
      if (this.socket === socket) this.ended = true;
      this.notify();
    });
    this.socket = socket;
    return socket;
  }

  private closeSocket(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.ended = true;
    socket?.destroy();
  }

  private fail(err: IpcamError): void {
    this.failure ??= err;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The first complete answer in the buffer (removed from it), or undefined while it is still coming. */
  private take(): RtspAnswer | undefined {
    const crlf = this.buffer.indexOf('\r\n\r\n');
    const lf = this.buffer.indexOf('\n\n');
    const [end, sep] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
    if (end < 0) {
      if (this.buffer.length > RTSP_MAX_HEAD) throw new IpcamError('EPARSE', `The answer head from ${this.target} is larger than ${RTSP_MAX_HEAD} bytes`);
      return undefined;
    }
    if (end > RTSP_MAX_HEAD) throw new IpcamError('EPARSE', `The answer head from ${this.target} is larger than ${RTSP_MAX_HEAD} bytes`);
    const [statusLine = '', ...headerLines] = this.buffer.toString('latin1', 0, end).split(/\r?\n/);
    const status = /^RTSP\/1\.\d\s+(\d{3})(?:\s|$)/.exec(statusLine);
    if (!status) throw new IpcamError('EPARSE', `The answer from ${this.target} is not RTSP`);
    const headers: Record<string, string[]> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      (headers[name] ??= []).push(line.slice(colon + 1).trim());
    }
    const lengthText = headers['content-length']?.[0] ?? '0';
    if (!/^\d{1,9}$/.test(lengthText)) throw new IpcamError('EPARSE', `The answer from ${this.target} has an unreadable Content-Length`);
    const length = Number(lengthText);
    if (length > RTSP_MAX_BODY) throw new IpcamError('EPARSE', `The answer from ${this.target} is larger than ${RTSP_MAX_BODY} bytes`);
    const start = end + sep;
    if (this.buffer.length < start + length) return undefined;
    const body = Buffer.from(this.buffer.subarray(start, start + length));
    this.buffer = this.buffer.subarray(start + length);
    return { status: Number(status[1]), headers, body };
  }
}
