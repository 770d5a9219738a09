import { IpcamError } from '../errors/errors';
import { parseChallenges, type Challenge } from './challenge';
import { digestAlgorithm, digestHash, digestResponse, formatNonceCount, newCnonce, quote, type DigestAlgorithm } from './digest';

/** How a device's requests authenticate (an ipcam-device's Auth setting): `auto` answers the challenge it gets. */
export const AUTH_MODES = ['auto', 'basic', 'digest'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export interface Credentials {
  username: string;
  password: string;
}

/** What one request was sent with, so that a 401 can be judged against it. */
export interface AuthTicket {
  scheme: 'none' | 'basic' | 'digest';
  nonce?: string;
  nonceCount?: number;
}

interface DigestState {
  algorithm: DigestAlgorithm;
  realm: string;
  nonce: string;
  opaque?: string;
  qop?: 'auth';
  userhash: boolean;
  cnonce: string;
  nonceCount: number;
}

/**
 * Authentication of one device: answers what `WWW-Authenticate` asks, remembers the scheme and the
 * digest nonce so that later requests cost one round trip, and refuses to retry a rejected
 * password (devices lock accounts after a few failures).
 */
export class DeviceAuth {
  private scheme: 'none' | 'basic' | 'digest';
  private digest: DigestState | undefined;
  private readonly basicHeader: string;

  constructor(
    private readonly mode: AuthMode,
    private readonly credentials: Credentials,
  ) {
    this.basicHeader = 'Basic ' + Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64');
    // Basic is sent up front when asked for: it costs nothing and saves the 401 round trip.
    this.scheme = mode === 'basic' ? 'basic' : 'none';
  }

  /** The Authorization header for a request, if the device has told us what it wants. */
  authorize(method: string, uri: string): { header?: string; ticket: AuthTicket } {
    if (this.scheme === 'basic') return { header: this.basicHeader, ticket: { scheme: 'basic' } };
    if (this.scheme === 'digest' && this.digest) {
      const d = this.digest;
      d.nonceCount += 1;
      return {
        header: this.digestHeader(d, method, uri),
        ticket: { scheme: 'digest', nonce: d.nonce, nonceCount: d.nonceCount },
      };
    }
    return { ticket: { scheme: 'none' } };
  }

  /**
   * Learns from a 401 and says whether the request is worth sending again. It is only when the
   * retry brings something new (a first challenge, a scheme change, a fresh nonce): never the
   * same credentials twice against the same challenge.
   */
  challenged(wwwAuthenticate: string | string[] | undefined, sent: AuthTicket): void {
    const challenge = this.pick(parseChallenges(wwwAuthenticate));
    if (!challenge) {
      throw new IpcamError('EAUTH', this.noSchemeMessage(wwwAuthenticate), { status: 401 });
    }
    if (this.credentials.username === '') {
      throw new IpcamError('EAUTH', 'The device asks for credentials and none are set', { status: 401 });
    }
    if (challenge.scheme === 'basic') {
      if (sent.scheme === 'basic') throw rejected();
      this.scheme = 'basic';
      this.digest = undefined;
      return;
    }
    const next = this.digestState(challenge);
    if (sent.scheme === 'digest') {
      const stale = (challenge.params['stale'] ?? '').toLowerCase() === 'true';
      // A nonce that worked before may expire without the device saying `stale`: one retry with
      // the fresh nonce is safe, as the password was accepted with the old one.
      const agedNonce = (sent.nonceCount ?? 1) > 1 && next.nonce !== sent.nonce;
      if (!stale && !agedNonce) {
        this.digest = undefined;
        this.scheme = 'none';
        throw rejected();
      }
    }
    this.scheme = 'digest';
    this.digest = next;
  }

  private pick(challenges: Challenge[]): Challenge | undefined {
    const digests = challenges.filter((c) => c.scheme === 'digest' && usableDigest(c));
    // Prefer the stronger hash when the device offers both.
    digests.sort((a, b) => strength(b) - strength(a));
    const basic = challenges.find((c) => c.scheme === 'basic');
    if (this.mode === 'digest') return digests[0];
    if (this.mode === 'basic') return basic;
    return digests[0] ?? basic;
  }

  private noSchemeMessage(header: string | string[] | undefined): string {
    if (header === undefined) return 'The device refused the request (401) without naming an authentication scheme';
    const wanted = this.mode === 'auto' ? 'Basic or Digest (MD5, SHA-256, qop auth)' : this.mode === 'basic' ? 'Basic' : 'Digest (MD5, SHA-256, qop auth)';
    return `The device does not offer ${wanted} authentication`;
  }

  private digestState(c: Challenge): DigestState {
    const qops = (c.params['qop'] ?? '').split(',').map((q) => q.trim().toLowerCase());
    const state: DigestState = {
      algorithm: digestAlgorithm(c.params['algorithm']) as DigestAlgorithm,
      realm: c.params['realm'] ?? '',
      nonce: c.params['nonce'] ?? '',
      userhash: (c.params['userhash'] ?? '').toLowerCase() === 'true',
      cnonce: newCnonce(),
      nonceCount: 0,
    };
    if (c.params['opaque'] !== undefined) state.opaque = c.params['opaque'];
    if (qops.includes('auth')) state.qop = 'auth';
    return state;
  }

  private digestHeader(d: DigestState, method: string, uri: string): string {
    const nc = formatNonceCount(d.nonceCount);
    const response = digestResponse({
      algorithm: d.algorithm,
      username: this.credentials.username,
      password: this.credentials.password,
      realm: d.realm,
      nonce: d.nonce,
      method,
      uri,
      ...(d.qop && { qop: d.qop, nc, cnonce: d.cnonce }),
    });
    const parts = [usernameParam(this.credentials.username, d), `realm=${quote(d.realm)}`, `nonce=${quote(d.nonce)}`, `uri=${quote(uri)}`, `algorithm=${d.algorithm}`, `response=${quote(response)}`];
    if (d.opaque !== undefined) parts.push(`opaque=${quote(d.opaque)}`);
    if (d.qop) parts.push(`qop=${d.qop}`, `nc=${nc}`, `cnonce=${quote(d.cnonce)}`);
    if (d.userhash) parts.push('userhash=true');
    return 'Digest ' + parts.join(', ');
  }
}

function rejected(): IpcamError {
  return new IpcamError('EAUTH', 'The device rejected the username or password', { status: 401 });
}

function usableDigest(c: Challenge): boolean {
  if (digestAlgorithm(c.params['algorithm']) === undefined || !c.params['nonce']) return false;
  const qop = c.params['qop'];
  // Without qop the RFC 2069 form applies; with qop we need `auth` (auth-int is not supported).
  return qop === undefined || qop.split(',').some((q) => q.trim().toLowerCase() === 'auth');
}

function strength(c: Challenge): number {
  return (digestAlgorithm(c.params['algorithm']) ?? 'MD5').startsWith('SHA-256') ? 1 : 0;
}

/** `username`, hashed when the device asks for userhash, or in RFC 8187 form when not ASCII. */
function usernameParam(username: string, d: DigestState): string {
  if (d.userhash) {
    return `username=${quote(digestHash(d.algorithm, `${username}:${d.realm}`))}`;
  }
  if (/^[\x20-\x7e]*$/.test(username)) return `username=${quote(username)}`;
  return `username*=UTF-8''${encodeURIComponent(username)}`;
}
