import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseChallenges } from '../transport/challenge';
import { digestAlgorithm, digestHash, digestResponse, quote, type DigestAlgorithm } from '../transport/digest';

/** What the simulated device accepts: `any` offers Digest (SHA-256 and MD5) and Basic. */
export type SimulatorAuth = 'basic' | 'digest' | 'any' | 'none';

/** The account the device accepts; ModifyPassword changes it while the simulator runs. */
export interface SimulatedAccount {
  username: string;
  password: string;
}

export interface ServerAuthOptions {
  mode: SimulatorAuth;
  /** Read at every request: a changed password takes effect at once, on both interfaces. */
  account: SimulatedAccount;
  realm: string;
  /** Digest algorithms offered, strongest first (default SHA-256 then MD5). */
  algorithms: DigestAlgorithm[];
  /** Lifetime of a nonce; after it the device answers `stale=true` (ms). */
  nonceTtl: number;
}

export type AuthVerdict = { ok: true; scheme: 'none' | 'basic' | 'digest' } | { ok: false; stale: boolean };

interface NonceRecord {
  issued: number;
  /** Nonce counts already seen: a replayed count is refused. */
  seen: Set<number>;
}

/** Server side of Basic and Digest (RFC 7616), as a camera implements it. */
export class ServerAuth {
  private readonly nonces = new Map<string, NonceRecord>();

  constructor(readonly options: ServerAuthOptions) {}

  verify(req: IncomingMessage): AuthVerdict {
    return this.verifyHeader(req.headers.authorization, req.method ?? 'GET', req.url ?? '/');
  }

  /** The same check for any protocol that carries the header (RTSP: the method and its URL). */
  verifyHeader(authorization: string | undefined, method: string, url: string): AuthVerdict {
    if (this.options.mode === 'none') return { ok: true, scheme: 'none' };
    const header = authorization ?? '';
    const space = header.indexOf(' ');
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    if (scheme === 'basic' && this.options.mode !== 'digest') return this.verifyBasic(header.slice(space + 1));
    if (scheme === 'digest' && this.options.mode !== 'basic') return this.verifyDigest(header, method, url);
    return { ok: false, stale: false };
  }

  /** `WWW-Authenticate` values for a 401. */
  challenges(stale: boolean): string[] {
    const out: string[] = [];
    if (this.options.mode === 'digest' || this.options.mode === 'any') {
      const nonce = this.issueNonce();
      const opaque = randomBytes(8).toString('hex');
      for (const algorithm of this.options.algorithms) {
        out.push(`Digest realm=${quote(this.options.realm)}, qop="auth", algorithm=${algorithm}, nonce=${quote(nonce)}, opaque=${quote(opaque)}${stale ? ', stale=true' : ''}`);
      }
    }
    if (this.options.mode === 'basic' || this.options.mode === 'any') out.push(`Basic realm=${quote(this.options.realm)}`);
    return out;
  }

  private verifyBasic(encoded: string): AuthVerdict {
    const decoded = Buffer.from(encoded.trim(), 'base64').toString('utf8');
    const expected = `${this.options.account.username}:${this.options.account.password}`;
    return safeEqual(decoded, expected) ? { ok: true, scheme: 'basic' } : { ok: false, stale: false };
  }

  private verifyDigest(header: string, method: string, url: string): AuthVerdict {
    const params = parseChallenges(header)[0]?.params ?? {};
    const algorithm = digestAlgorithm(params['algorithm']);
    const nonce = params['nonce'] ?? '';
    const record = this.nonces.get(nonce);
    if (!algorithm || !this.options.algorithms.includes(algorithm) || !record) return { ok: false, stale: false };
    if (params['uri'] !== url || params['realm'] !== this.options.realm) return { ok: false, stale: false };
    const username = params['userhash'] === 'true' ? this.options.account.username : decodeUsername(params);
    if (params['userhash'] === 'true' && params['username'] !== digestHash(algorithm, `${this.options.account.username}:${this.options.realm}`)) {
      return { ok: false, stale: false };
    }
    const qop = params['qop'];
    const nc = parseInt(params['nc'] ?? '', 16);
    if (qop !== undefined && (qop !== 'auth' || !Number.isInteger(nc) || nc < 1 || record.seen.has(nc))) return { ok: false, stale: false };
    const expected = digestResponse({
      algorithm,
      username,
      password: this.options.account.password,
      realm: this.options.realm,
      nonce,
      method,
      uri: url,
      ...(qop === 'auth' && { qop: 'auth' as const, nc: params['nc'] ?? '', cnonce: params['cnonce'] ?? '' }),
    });
    if (username !== this.options.account.username || !safeEqual(params['response'] ?? '', expected)) return { ok: false, stale: false };
    if (Date.now() - record.issued > this.options.nonceTtl) {
      this.nonces.delete(nonce);
      return { ok: false, stale: true };
    }
    if (qop === 'auth') record.seen.add(nc);
    return { ok: true, scheme: 'digest' };
  }

  private issueNonce(): string {
    const now = Date.now();
    // Forget expired nonces so that a long-running simulator keeps a bounded table.
    for (const [nonce, rec] of this.nonces) if (now - rec.issued > this.options.nonceTtl * 2) this.nonces.delete(nonce);
    const nonce = randomBytes(16).toString('base64');
    this.nonces.set(nonce, { issued: now, seen: new Set() });
    return nonce;
  }
}

function decodeUsername(params: Record<string, string>): string {
  const extended = params['username*'];
  if (extended !== undefined) {
    const match = /^UTF-8''(.*)$/i.exec(extended);
    if (match) return decodeURIComponent(match[1] ?? '');
  }
  return params['username'] ?? '';
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
