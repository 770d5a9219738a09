import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { parseChallenges } from '../lib/transport/challenge';
import { digestAlgorithm, digestHash, digestResponse, formatNonceCount, newCnonce, quote, type DigestInput } from '../lib/transport/digest';

/** RFC 7616 section 3.9.1 (password "Circle of Life", lower-case "of", per verified erratum 4495). */
const RFC = {
  username: 'Mufasa',
  password: 'Circle of Life',
  realm: 'http-auth@example.org',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  nc: '00000001',
  qop: 'auth' as const,
  method: 'GET',
  uri: '/dir/index.html',
};

const md5 = (text: string): string => createHash('md5').update(text, 'utf8').digest('hex');
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('digest: RFC 7616 computations', () => {
  it('gives the response of RFC 7616 section 3.9.1 for MD5', () => {
    assert.equal(digestResponse({ ...RFC, algorithm: 'MD5' }), '8ca523f5e9506fed4657c9700eebdbec');
  });

  it('gives the response of RFC 7616 section 3.9.1 for SHA-256', () => {
    assert.equal(digestResponse({ ...RFC, algorithm: 'SHA-256' }), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  });

  it('gives the response of RFC 2617 section 3.5 (MD5, qop auth)', () => {
    const response = digestResponse({
      algorithm: 'MD5',
      username: 'Mufasa',
      password: 'Circle Of Life',
      realm: 'testrealm@host.com',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      method: 'GET',
      uri: '/dir/index.html',
      qop: 'auth',
      nc: '00000001',
      cnonce: '0a4f113b',
    });
    assert.equal(response, '6629fae49393a05397450978507c4ef1');
  });

  it('MD5-sess folds the nonce and cnonce into HA1', () => {
    const ha1 = md5(`${md5(`${RFC.username}:${RFC.realm}:${RFC.password}`)}:${RFC.nonce}:${RFC.cnonce}`);
    const ha2 = md5(`${RFC.method}:${RFC.uri}`);
    const expected = md5(`${ha1}:${RFC.nonce}:${RFC.nc}:${RFC.cnonce}:auth:${ha2}`);
    const actual = digestResponse({ ...RFC, algorithm: 'MD5-sess' });
    assert.equal(actual, expected);
    assert.notEqual(actual, digestResponse({ ...RFC, algorithm: 'MD5' }));
  });

  it('SHA-256-sess folds the nonce and cnonce into HA1', () => {
    const ha1 = sha256(`${sha256(`${RFC.username}:${RFC.realm}:${RFC.password}`)}:${RFC.nonce}:${RFC.cnonce}`);
    const ha2 = sha256(`${RFC.method}:${RFC.uri}`);
    const expected = sha256(`${ha1}:${RFC.nonce}:${RFC.nc}:${RFC.cnonce}:auth:${ha2}`);
    const actual = digestResponse({ ...RFC, algorithm: 'SHA-256-sess' });
    assert.equal(actual, expected);
    assert.equal(actual.length, 64);
  });

  it('without qop uses the RFC 2069 form H(HA1:nonce:HA2)', () => {
    const input: DigestInput = { algorithm: 'MD5', username: 'Mufasa', password: 'CircleOfLife', realm: 'testrealm@host.com', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', method: 'GET', uri: '/dir/index.html' };
    const ha1 = md5('Mufasa:testrealm@host.com:CircleOfLife');
    const ha2 = md5('GET:/dir/index.html');
    assert.equal(digestResponse(input), md5(`${ha1}:dcd98b7102dd2f0e8b11d0f600bfb0c093:${ha2}`));
    // nc and cnonce play no part without qop.
    assert.equal(digestResponse({ ...input, nc: '00000009', cnonce: 'zzz' }), digestResponse(input));
  });

  it('depends on every input', () => {
    const base = digestResponse({ ...RFC, algorithm: 'SHA-256' });
    const changes: Array<Partial<DigestInput>> = [{ username: 'mufasa' }, { password: 'Circle Of Life' }, { realm: 'x' }, { nonce: 'x' }, { cnonce: 'x' }, { nc: '00000002' }, { method: 'POST' }, { uri: '/dir/index.htm' }];
    for (const change of changes) {
      assert.notEqual(digestResponse({ ...RFC, algorithm: 'SHA-256', ...change }), base, JSON.stringify(change));
    }
  });

  it('hashes UTF-8 text', () => {
    assert.equal(digestHash('MD5', 'wörd'), md5('wörd'));
    assert.equal(digestHash('SHA-256-sess', 'wörd'), sha256('wörd'));
    assert.equal(digestHash('MD5', 'wörd'), createHash('md5').update(Buffer.from('w\u00c3\u00b6rd', 'latin1')).digest('hex'));
  });

  it('names the supported algorithms, MD5 when absent, case-insensitive', () => {
    assert.equal(digestAlgorithm(undefined), 'MD5');
    assert.equal(digestAlgorithm('md5'), 'MD5');
    assert.equal(digestAlgorithm('MD5-SESS'), 'MD5-sess');
    assert.equal(digestAlgorithm('sha-256'), 'SHA-256');
    assert.equal(digestAlgorithm('SHA-256-sess'), 'SHA-256-sess');
    assert.equal(digestAlgorithm('SHA-512-256'), undefined);
    assert.equal(digestAlgorithm('token'), undefined);
  });

  it('writes the nonce count as 8 hex digits', () => {
    assert.equal(formatNonceCount(1), '00000001');
    assert.equal(formatNonceCount(10), '0000000a');
    assert.equal(formatNonceCount(255), '000000ff');
    assert.equal(formatNonceCount(0x12345678), '12345678');
  });

  it('makes a new cnonce every time', () => {
    const a = newCnonce();
    const b = newCnonce();
    assert.match(a, /^[0-9a-f]{32}$/);
    assert.notEqual(a, b);
  });

  it('quotes with backslash escapes for " and \\', () => {
    assert.equal(quote('plain'), '"plain"');
    assert.equal(quote('a"b\\c'), '"a\\"b\\\\c"');
  });
});

describe('digest: parseChallenges', () => {
  it('reads the RFC 7616 challenges of one header, in order', () => {
    const header =
      'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS", ' +
      'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
    const challenges = parseChallenges(header);
    assert.equal(challenges.length, 2);
    assert.deepEqual(challenges[0], {
      scheme: 'digest',
      params: {
        realm: 'http-auth@example.org',
        qop: 'auth, auth-int',
        algorithm: 'SHA-256',
        nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
        opaque: 'FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS',
      },
    });
    assert.equal(challenges[1]?.params['algorithm'], 'MD5');
  });

  it('reads Digest and Basic in one header', () => {
    const challenges = parseChallenges('Digest realm="cam", nonce="n1", qop="auth", Basic realm="cam"');
    assert.deepEqual(
      challenges.map((c) => [c.scheme, c.params['realm']]),
      [
        ['digest', 'cam'],
        ['basic', 'cam'],
      ],
    );
    assert.equal(challenges[0]?.params['nonce'], 'n1');
    assert.deepEqual(Object.keys(challenges[1]?.params ?? {}), ['realm']);
  });

  it('reads challenges spread over several headers', () => {
    const challenges = parseChallenges(['Digest realm="a", nonce="1", algorithm=SHA-256', 'Digest realm="a", nonce="1", algorithm=MD5', 'Basic realm="a"']);
    assert.deepEqual(
      challenges.map((c) => [c.scheme, c.params['algorithm']]),
      [
        ['digest', 'SHA-256'],
        ['digest', 'MD5'],
        ['basic', undefined],
      ],
    );
  });

  it('reads quoted strings with escaped quotes, backslashes and commas', () => {
    const [c] = parseChallenges('Digest realm="Cam \\"Front\\", gate 1", nonce="a,b,c", opaque="x\\\\y", qop="auth"');
    assert.ok(c);
    assert.equal(c.params['realm'], 'Cam "Front", gate 1');
    assert.equal(c.params['nonce'], 'a,b,c');
    assert.equal(c.params['opaque'], 'x\\y');
    assert.equal(c.params['qop'], 'auth');
  });

  it('takes schemes and parameter names case-insensitively, keeps values as sent', () => {
    const [digest, basic] = parseChallenges('DIGEST Realm="R", NONCE="AbC", Algorithm=sha-256, Stale=TRUE, BASIC REALM="R"');
    assert.equal(digest?.scheme, 'digest');
    assert.deepEqual(digest?.params, { realm: 'R', nonce: 'AbC', algorithm: 'sha-256', stale: 'TRUE' });
    assert.equal(basic?.scheme, 'basic');
    assert.equal(basic?.params['realm'], 'R');
  });

  it('copes with spaces around = and commas, and empty list elements', () => {
    const challenges = parseChallenges('  Basic realm = "r" ,, Digest  realm="d" , nonce = "n" ,  ');
    assert.deepEqual(challenges, [
      { scheme: 'basic', params: { realm: 'r' } },
      { scheme: 'digest', params: { realm: 'd', nonce: 'n' } },
    ]);
  });

  it('reads a scheme without parameters and survives a token68', () => {
    const challenges = parseChallenges('Negotiate, NTLM TlRMTVNTUAACAAAA==, Basic realm="x"');
    assert.deepEqual(
      challenges.map((c) => c.scheme),
      ['negotiate', 'ntlm', 'basic'],
    );
    assert.equal(challenges[2]?.params['realm'], 'x');
  });

  it('ends on an unterminated quoted string without hanging', () => {
    const [c] = parseChallenges('Digest nonce="n", realm="never closed');
    assert.equal(c?.scheme, 'digest');
    assert.deepEqual(c?.params, { nonce: 'n', realm: 'never closed' });
  });

  it('gives nothing for no header and an empty header', () => {
    assert.deepEqual(parseChallenges(undefined), []);
    assert.deepEqual(parseChallenges(''), []);
    assert.deepEqual(parseChallenges([]), []);
  });
});
