import { createHash, randomBytes } from 'node:crypto';

/** HTTP Digest computations of RFC 7616, shared by the client and the simulator. */
export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

const ALGORITHMS: Record<string, DigestAlgorithm> = {
  'md5': 'MD5',
  'md5-sess': 'MD5-sess',
  'sha-256': 'SHA-256',
  'sha-256-sess': 'SHA-256-sess',
};

/** The algorithm named in a challenge (absent means MD5), or undefined when we do not support it. */
export function digestAlgorithm(name: string | undefined): DigestAlgorithm | undefined {
  return ALGORITHMS[(name ?? 'MD5').toLowerCase()];
}

export interface DigestInput {
  algorithm: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  method: string;
  uri: string;
  /** `auth` or absent (RFC 2069 compatibility: no qop, nc or cnonce). */
  qop?: 'auth';
  nc?: string;
  cnonce?: string;
}

export function digestResponse(input: DigestInput): string {
  const hash = (text: string): string => digestHash(input.algorithm, text);
  let ha1 = hash(`${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess')) ha1 = hash(`${ha1}:${input.nonce}:${input.cnonce ?? ''}`);
  const ha2 = hash(`${input.method}:${input.uri}`);
  return input.qop === 'auth'
    ? hash(`${ha1}:${input.nonce}:${input.nc ?? ''}:${input.cnonce ?? ''}:auth:${ha2}`)
    : hash(`${ha1}:${input.nonce}:${ha2}`);
}

/** Nonce count as the 8 hex digits the header carries. */
export function formatNonceCount(n: number): string {
  return n.toString(16).padStart(8, '0');
}

export function newCnonce(): string {
  return randomBytes(16).toString('hex');
}

/** H() of RFC 7616 for the algorithm's hash function, as lower-case hex. */
export function digestHash(algorithm: DigestAlgorithm, text: string): string {
  return createHash(algorithm.startsWith('SHA-256') ? 'sha256' : 'md5').update(text, 'utf8').digest('hex');
}

/** Quoted-string per RFC 9110: backslash-escape `"` and `\`. */
export function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
