import { IpcamError } from '../errors';

interface Context {
  /** What was being done, e.g. `http://10.0.0.5:80 (GET /jpg/image.jpg)`. */
  target: string;
  /** Strings that must never appear in the message (the password). */
  secrets: string[];
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const CONNECTION_TEXT: Record<string, string> = {
  ECONNREFUSED: 'Connection refused by',
  ENOTFOUND: 'Host name not found for',
  EAI_AGAIN: 'Host name lookup failed for',
  EHOSTUNREACH: 'Host unreachable:',
  ENETUNREACH: 'Network unreachable for',
  ECONNRESET: 'Connection reset by',
  EPIPE: 'Connection closed by',
  UND_ERR_SOCKET: 'Connection closed by',
  UND_ERR_CLOSED: 'Connection closed to',
  UND_ERR_DESTROYED: 'Connection closed to',
};

/** Maps whatever undici or the socket threw to an `IpcamError` whose text is safe to show. */
export function transportError(err: unknown, ctx: Context): IpcamError {
  if (err instanceof IpcamError) return err;
  const code = errorCode(err);
  if (TIMEOUT_CODES.has(code)) return new IpcamError('ETIMEOUT', `No answer in time from ${ctx.target}`);
  if (code === 'ABORT_ERR' || code === 'UND_ERR_ABORTED' || (err instanceof Error && err.name === 'AbortError')) {
    return new IpcamError('ECONN', `Request to ${ctx.target} was aborted`);
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return new IpcamError('ECONN', `${ctx.target} does not speak TLS on this port: choose http or the device's https port`);
  }
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) {
    return new IpcamError('ECONN', `TLS certificate of ${ctx.target} not accepted (${code}): trust its CA or turn off verification`);
  }
  const known = CONNECTION_TEXT[code];
  if (known) return new IpcamError('ECONN', `${known} ${ctx.target}`);
  const detail = err instanceof Error ? err.message : String(err);
  return new IpcamError('ECONN', redact(`Request to ${ctx.target} failed: ${detail}`, ctx.secrets));
}

function errorCode(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? '' : errorCode(cause);
}

export function redact(text: string, secrets: string[]): string {
  return secrets.reduce((out, secret) => (secret === '' ? out : out.split(secret).join('***')), text);
}
