import { IpcamError } from '../errors/errors';

interface Context {
  /** What was being done, e.g. `http://10.0.0.5:80 (GET /jpg/image.jpg)`: our own words only. */
  target: string;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const ABORT_CODES = new Set(['ABORT_ERR', 'UND_ERR_ABORTED']);
const NOT_TLS_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);
/** Certificate codes of Node's TLS, named in the text: they tell which fix applies. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
/** A sentence per connection error code; the target follows it. */
const CONNECTION_TEXT: Record<string, string> = {
  ECONNREFUSED: 'Connection refused by',
  ENOTFOUND: 'Host name not found for',
  EAI_AGAIN: 'Host name lookup failed for',
  EAI_FAIL: 'Host name lookup failed for',
  EHOSTUNREACH: 'Host unreachable:',
  EHOSTDOWN: 'Host down:',
  ENETUNREACH: 'Network unreachable for',
  ENETDOWN: 'Network down for',
  EADDRNOTAVAIL: 'No local address to reach',
  ECONNRESET: 'Connection reset by',
  ECONNABORTED: 'Connection aborted to',
  EPIPE: 'Connection closed by',
  UND_ERR_SOCKET: 'Connection closed by',
  UND_ERR_CLOSED: 'Connection closed to',
  UND_ERR_DESTROYED: 'Connection closed to',
};
/** What an error code looks like (Node's and undici's): an identifier, never data. */
const CODE_SHAPE = /^[A-Z][A-Z0-9_]{1,47}$/;

/**
 * Maps whatever undici or the socket threw to an `IpcamError`. The text is built from the target
 * and a sentence chosen by the error's code or class, never from the error's own message: that
 * is foreign text (it may quote a header, a URL or a certificate) and could hold anything.
 */
export function transportError(err: unknown, ctx: Context): IpcamError {
  if (err instanceof IpcamError) return err;
  const code = errorCode(err);
  const shown = CODE_SHAPE.test(code) ? ` (${code})` : '';
  if (TIMEOUT_CODES.has(code)) return new IpcamError('ETIMEOUT', `No answer in time from ${ctx.target}`);
  if (ABORT_CODES.has(code) || (err instanceof Error && err.name === 'AbortError')) {
    return new IpcamError('ECONN', `Request to ${ctx.target} was aborted`);
  }
  if (NOT_TLS_CODES.has(code)) {
    return new IpcamError('ECONN', `${ctx.target} does not speak TLS on this port: choose http or the device's https port`);
  }
  if (CERTIFICATE_CODES.has(code)) {
    return new IpcamError('ECONN', `TLS certificate of ${ctx.target} not accepted${shown}: trust its CA or turn off verification`);
  }
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.startsWith('CERT_')) {
    return new IpcamError('ECONN', `TLS connection to ${ctx.target} failed${shown}`);
  }
  const known = CONNECTION_TEXT[code];
  if (known) return new IpcamError('ECONN', `${known} ${ctx.target}`);
  if (code.startsWith('HPE_')) return new IpcamError('ECONN', `The answer from ${ctx.target} is not readable HTTP${shown}`);
  return new IpcamError('ECONN', `Request to ${ctx.target} failed${shown}`);
}

/** The peer ended the connection: its FIN (undici's `other side closed`), its RST, or a write after it. */
const CLOSED_BY_PEER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** `err` is the connection closing under an exchange from the device's side (not a timeout, an abort or a refused connect). */
export function closedByPeer(err: unknown): boolean {
  return CLOSED_BY_PEER.has(errorCode(err));
}

/** The code of the error or of its causes (undici wraps socket errors), '' when none. */
function errorCode(err: unknown, depth = 0): string {
  if (typeof err !== 'object' || err === null || depth > 4) return '';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? '' : errorCode(cause, depth + 1);
}
