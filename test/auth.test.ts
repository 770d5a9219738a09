import { strict as assert } from 'node:assert';
import { IpcamError } from '../lib/errors/errors';
import { DeviceAuth, type AuthTicket } from '../lib/transport/auth';
import { parseChallenges } from '../lib/transport/challenge';
import { digestHash, digestResponse, type DigestAlgorithm } from '../lib/transport/digest';
import { SIM_PASSWORD, SIM_USER } from './helpers';

const CREDS = { username: SIM_USER, password: SIM_PASSWORD };
const REALM = 'ipcam';

function digestChallenge(nonce: string, extra: { algorithm?: string; stale?: boolean; qop?: string | null; opaque?: string; userhash?: boolean } = {}): string {
  const parts = [`Digest realm="${REALM}"`];
  if (extra.qop !== null) parts.push(`qop="${extra.qop ?? 'auth'}"`);
  if (extra.algorithm !== undefined) parts.push(`algorithm=${extra.algorithm}`);
  parts.push(`nonce="${nonce}"`);
  if (extra.opaque !== undefined) parts.push(`opaque="${extra.opaque}"`);
  if (extra.stale) parts.push('stale=true');
  if (extra.userhash) parts.push('userhash=true');
  return parts.join(', ');
}

const BASIC = `Basic realm="${REALM}"`;

/** The parameters of a Digest Authorization header. */
function digestParams(header: string | undefined): Record<string, string> {
  assert.ok(header?.startsWith('Digest '), `expected a Digest header, got ${String(header)}`);
  const [parsed] = parseChallenges(header);
  assert.ok(parsed);
  return parsed.params;
}

function expectEauth(fn: () => void): IpcamError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected EAUTH, got ${String(caught)}`);
  assert.equal(caught.code, 'EAUTH', caught.message);
  assert.equal(caught.status, 401);
  assert.ok(!caught.message.includes(SIM_PASSWORD));
  return caught;
}

/** Checks a Digest header the way a device would, with the password it knows. */
function verifies(header: string | undefined, method: string, uri: string, password = SIM_PASSWORD): boolean {
  const p = digestParams(header);
  const algorithm = p['algorithm'] as DigestAlgorithm;
  const expected = digestResponse({
    algorithm,
    username: p['username'] ?? '',
    password,
    realm: p['realm'] ?? '',
    nonce: p['nonce'] ?? '',
    method,
    uri,
    ...(p['qop'] === 'auth' && { qop: 'auth' as const, nc: p['nc'] ?? '', cnonce: p['cnonce'] ?? '' }),
  });
  return p['uri'] === uri && p['response'] === expected;
}

describe('DeviceAuth', () => {
  describe('basic mode', () => {
    it('sends Basic preemptively, before any challenge', () => {
      const auth = new DeviceAuth('basic', CREDS);
      const { header, ticket } = auth.authorize('GET', '/jpg/image.jpg');
      assert.equal(header, 'Basic ' + Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`, 'utf8').toString('base64'));
      assert.deepEqual(ticket, { scheme: 'basic' });
      assert.equal(auth.authorize('GET', '/other').header, header, 'the same header every time');
    });

    it('a 401 to Basic credentials is EAUTH, never retried', () => {
      const auth = new DeviceAuth('basic', CREDS);
      const { ticket } = auth.authorize('GET', '/x');
      const err = expectEauth(() => auth.challenged(BASIC, ticket));
      assert.match(err.message, /rejected the username or password/);
    });

    it('does not answer Digest when Basic was chosen', () => {
      const auth = new DeviceAuth('basic', CREDS);
      const err = expectEauth(() => auth.challenged(digestChallenge('n1'), auth.authorize('GET', '/x').ticket));
      assert.match(err.message, /does not offer Basic/);
    });
  });

  describe('auto mode', () => {
    it('sends nothing before the device has asked', () => {
      const auth = new DeviceAuth('auto', CREDS);
      const { header, ticket } = auth.authorize('GET', '/x');
      assert.equal(header, undefined);
      assert.deepEqual(ticket, { scheme: 'none' });
    });

    it('answers Digest when offered with Basic, and remembers it', () => {
      const auth = new DeviceAuth('auto', CREDS);
      auth.challenged([digestChallenge('n1', { algorithm: 'MD5' }), BASIC], auth.authorize('GET', '/a').ticket);
      const first = auth.authorize('GET', '/a');
      assert.equal(digestParams(first.header)['algorithm'], 'MD5');
      assert.ok(verifies(first.header, 'GET', '/a'));
      const second = auth.authorize('POST', '/b');
      assert.ok(verifies(second.header, 'POST', '/b'), 'the scheme and nonce are kept for later requests');
      assert.equal(second.ticket.scheme, 'digest');
    });

    it('prefers SHA-256 over MD5 whatever the order offered', () => {
      for (const order of [
        ['MD5', 'SHA-256'],
        ['SHA-256', 'MD5'],
      ]) {
        const auth = new DeviceAuth('auto', CREDS);
        auth.challenged(
          order.map((algorithm) => digestChallenge(`n-${algorithm}`, { algorithm })),
          auth.authorize('GET', '/x').ticket,
        );
        const p = digestParams(auth.authorize('GET', '/x').header);
        assert.equal(p['algorithm'], 'SHA-256', `offered ${order.join(', ')}`);
        assert.equal(p['nonce'], 'n-SHA-256');
      }
    });

    it('answers Basic when only Basic is offered, and remembers it', () => {
      const auth = new DeviceAuth('auto', CREDS);
      auth.challenged(BASIC, auth.authorize('GET', '/x').ticket);
      const expected = 'Basic ' + Buffer.from(`${SIM_USER}:${SIM_PASSWORD}`, 'utf8').toString('base64');
      assert.equal(auth.authorize('GET', '/x').header, expected);
      assert.equal(auth.authorize('GET', '/y').header, expected);
    });

    it('skips Digest variants it cannot answer and falls back to Basic', () => {
      const auth = new DeviceAuth('auto', CREDS);
      auth.challenged([digestChallenge('n1', { algorithm: 'SHA-512-256' }), digestChallenge('n2', { qop: 'auth-int' }), BASIC], auth.authorize('GET', '/x').ticket);
      assert.match(auth.authorize('GET', '/x').header ?? '', /^Basic /);
    });

    it('switches from Basic to Digest once when the device asks for Digest', () => {
      const auth = new DeviceAuth('auto', CREDS);
      auth.challenged(BASIC, auth.authorize('GET', '/x').ticket);
      auth.challenged(digestChallenge('n1'), auth.authorize('GET', '/x').ticket);
      assert.ok(verifies(auth.authorize('GET', '/x').header, 'GET', '/x'));
    });
  });

  describe('digest', () => {
    it('reuses the nonce with nc counting up, and a fixed cnonce per nonce', () => {
      const auth = new DeviceAuth('digest', CREDS);
      assert.equal(auth.authorize('GET', '/x').header, undefined, 'digest needs a challenge first');
      auth.challenged(digestChallenge('nonce-1', { algorithm: 'SHA-256', opaque: 'op' }), { scheme: 'none' });
      const seen = [1, 2, 3].map(() => auth.authorize('GET', '/cgi-bin/admin/param?action=list'));
      assert.deepEqual(
        seen.map((s) => digestParams(s.header)['nc']),
        ['00000001', '00000002', '00000003'],
      );
      assert.deepEqual(
        seen.map((s) => s.ticket),
        [1, 2, 3].map((n): AuthTicket => ({ scheme: 'digest', nonce: 'nonce-1', nonceCount: n })),
      );
      const params = seen.map((s) => digestParams(s.header));
      assert.ok(params.every((p) => p['nonce'] === 'nonce-1' && p['opaque'] === 'op' && p['qop'] === 'auth' && p['realm'] === REALM));
      assert.equal(new Set(params.map((p) => p['cnonce'])).size, 1);
      assert.equal(new Set(params.map((p) => p['response'])).size, 3, 'each nc gives its own response');
      for (const s of seen) assert.ok(verifies(s.header, 'GET', '/cgi-bin/admin/param?action=list'));
    });

    it('writes the header the simulator and devices expect', () => {
      const auth = new DeviceAuth('digest', { username: 'Mufasa', password: 'Circle of Life' });
      auth.challenged(digestChallenge('abc', { algorithm: 'MD5', opaque: 'xyz' }), { scheme: 'none' });
      const header = auth.authorize('GET', '/dir/index.html').header ?? '';
      assert.match(header, /^Digest username="Mufasa", realm="ipcam", nonce="abc", uri="\/dir\/index.html", algorithm=MD5, response="[0-9a-f]{32}", opaque="xyz", qop=auth, nc=00000001, cnonce="[0-9a-f]+"$/);
    });

    it('answers the RFC 2069 form when the challenge has no qop', () => {
      const auth = new DeviceAuth('digest', CREDS);
      auth.challenged(digestChallenge('old', { qop: null }), { scheme: 'none' });
      const { header } = auth.authorize('GET', '/x');
      const p = digestParams(header);
      assert.equal(p['qop'], undefined);
      assert.equal(p['nc'], undefined);
      assert.equal(p['cnonce'], undefined);
      assert.equal(p['algorithm'], 'MD5', 'no algorithm means MD5');
      assert.ok(verifies(header, 'GET', '/x'));
    });

    it('a 401 right after a fresh challenge is EAUTH (wrong password), never retried', () => {
      const auth = new DeviceAuth('auto', CREDS);
      auth.challenged(digestChallenge('n1'), auth.authorize('GET', '/x').ticket);
      const { ticket } = auth.authorize('GET', '/x');
      assert.equal(ticket.nonceCount, 1);
      const err = expectEauth(() => auth.challenged(digestChallenge('n2'), ticket));
      assert.match(err.message, /rejected the username or password/);
      assert.equal(auth.authorize('GET', '/x').header, undefined, 'the rejected scheme is forgotten');
    });

    it('a 401 repeating the same nonce is EAUTH even after several uses', () => {
      const auth = new DeviceAuth('digest', CREDS);
      auth.challenged(digestChallenge('n1'), { scheme: 'none' });
      auth.authorize('GET', '/x');
      const { ticket } = auth.authorize('GET', '/x');
      assert.equal(ticket.nonceCount, 2);
      expectEauth(() => auth.challenged(digestChallenge('n1'), ticket));
    });

    it('stale=true is retried once with the new nonce, nc starting again at 1', () => {
      const auth = new DeviceAuth('digest', CREDS);
      auth.challenged(digestChallenge('n1'), { scheme: 'none' });
      const { ticket } = auth.authorize('GET', '/x');
      auth.challenged(digestChallenge('n2', { stale: true }), ticket);
      const retry = auth.authorize('GET', '/x');
      const p = digestParams(retry.header);
      assert.equal(p['nonce'], 'n2');
      assert.equal(p['nc'], '00000001');
      assert.ok(verifies(retry.header, 'GET', '/x'));
    });

    it('a nonce that aged out without stale (nc > 1, new nonce) is retried once', () => {
      const auth = new DeviceAuth('digest', CREDS);
      auth.challenged(digestChallenge('n1'), { scheme: 'none' });
      auth.authorize('GET', '/x');
      const { ticket } = auth.authorize('GET', '/x');
      auth.challenged(digestChallenge('n2'), ticket);
      const retry = auth.authorize('GET', '/x');
      assert.equal(digestParams(retry.header)['nonce'], 'n2');
      assert.equal(digestParams(retry.header)['nc'], '00000001');
      // The renewed nonce is refused at once: this time it is the password.
      expectEauth(() => auth.challenged(digestChallenge('n3'), retry.ticket));
    });

    it('sends username* (RFC 8187) for a username that is not ASCII', () => {
      const auth = new DeviceAuth('digest', { username: 'Jäsøn Doe', password: 'pw' });
      auth.challenged(digestChallenge('n1', { algorithm: 'SHA-256' }), { scheme: 'none' });
      const header = auth.authorize('GET', '/x').header ?? '';
      assert.match(header, /username\*=UTF-8''J%C3%A4s%C3%B8n%20Doe/);
      assert.doesNotMatch(header, /username="/);
      assert.ok(verifies(header.replace(`username*=UTF-8''J%C3%A4s%C3%B8n%20Doe`, 'username="Jäsøn Doe"'), 'GET', '/x', 'pw'));
    });

    it('sends the hashed username when the device asks for userhash', () => {
      const auth = new DeviceAuth('digest', CREDS);
      auth.challenged(digestChallenge('n1', { algorithm: 'SHA-256', userhash: true }), { scheme: 'none' });
      const p = digestParams(auth.authorize('GET', '/x').header);
      assert.equal(p['username'], digestHash('SHA-256', `${SIM_USER}:${REALM}`));
      assert.equal(p['userhash'], 'true');
    });

    it('escapes quotes in the username and the URI', () => {
      const auth = new DeviceAuth('digest', { username: 'a"b', password: 'pw' });
      auth.challenged(digestChallenge('n1'), { scheme: 'none' });
      const p = digestParams(auth.authorize('GET', '/x?q="1"').header);
      assert.equal(p['username'], 'a"b');
      assert.equal(p['uri'], '/x?q="1"');
    });

    it('refuses a device that offers only Basic', () => {
      const auth = new DeviceAuth('digest', CREDS);
      const err = expectEauth(() => auth.challenged(BASIC, { scheme: 'none' }));
      assert.match(err.message, /does not offer Digest/);
    });
  });

  describe('what cannot be answered', () => {
    it('no username is EAUTH', () => {
      const auth = new DeviceAuth('auto', { username: '', password: '' });
      const err = expectEauth(() => auth.challenged([digestChallenge('n1'), BASIC], auth.authorize('GET', '/x').ticket));
      assert.match(err.message, /credentials/);
      assert.equal(auth.authorize('GET', '/x').header, undefined);
    });

    it('no usable scheme is EAUTH naming what is supported', () => {
      const auth = new DeviceAuth('auto', CREDS);
      const err = expectEauth(() => auth.challenged(['Negotiate', 'NTLM', digestChallenge('n1', { algorithm: 'SHA-512-256' })], auth.authorize('GET', '/x').ticket));
      assert.equal(err.message, 'The device does not offer Basic or Digest (MD5, SHA-256, qop auth) authentication');
    });

    it('a Digest challenge without a nonce is not usable', () => {
      const auth = new DeviceAuth('auto', CREDS);
      expectEauth(() => auth.challenged('Digest realm="x", qop="auth"', auth.authorize('GET', '/x').ticket));
    });

    it('a 401 without WWW-Authenticate is EAUTH with a clear text', () => {
      const auth = new DeviceAuth('auto', CREDS);
      const err = expectEauth(() => auth.challenged(undefined, auth.authorize('GET', '/x').ticket));
      assert.match(err.message, /without naming an authentication scheme/);
    });
  });
});
