import { strict as assert } from 'node:assert';
import { buildCgiPath, encodeCgi, encodeQuery, parseKeyValues } from '../lib/cgi/codec';

/** Spec rule 3: these and the space are written as %<hex> inside a parameter or a value. */
const RESERVED: ReadonlyArray<readonly [string, string]> = [
  [';', '%3B'],
  ['/', '%2F'],
  ['?', '%3F'],
  [':', '%3A'],
  ['@', '%40'],
  ['&', '%26'],
  ['=', '%3D'],
  ['+', '%2B'],
  [',', '%2C'],
  ['$', '%24'],
  [' ', '%20'],
];

describe('cgi codec: buildCgiPath', () => {
  it('leaves the path alone without parameters', () => {
    assert.equal(buildCgiPath('/cgi-bin/admin/param'), '/cgi-bin/admin/param');
    assert.equal(buildCgiPath('/cgi-bin/admin/param', {}), '/cgi-bin/admin/param');
    assert.equal(buildCgiPath('/cgi-bin/admin/param', []), '/cgi-bin/admin/param');
  });

  it('joins plain parameters with & after ?', () => {
    assert.equal(buildCgiPath('/cgi-bin/admin/param', { action: 'list', group: 'Network' }), '/cgi-bin/admin/param?action=list&group=Network');
  });

  for (const [ch, encoded] of RESERVED) {
    it(`percent-encodes ${JSON.stringify(ch)} as ${encoded} in keys and values`, () => {
      assert.equal(buildCgiPath('/x', { [`k${ch}k`]: `v${ch}v` }), `/x?k${encoded}k=v${encoded}v`);
      assert.equal(buildCgiPath('/x', [[`k${ch}`, `${ch}v`]]), `/x?k${encoded}=${encoded}v`);
    });
  }

  it('encodes a value made of every reserved character so that none is left raw', () => {
    const value = RESERVED.map(([ch]) => ch).join('');
    const built = buildCgiPath('/cgi-bin/admin/servetest', { cmd: value });
    assert.equal(built, '/cgi-bin/admin/servetest?cmd=' + RESERVED.map(([, enc]) => enc).join(''));
    const query = built.slice(built.indexOf('?') + 1);
    assert.doesNotMatch(query.slice('cmd='.length), /[;/?:@&=+,$ ]/);
  });

  it('writes the backslash of a pulse sequence as %5C', () => {
    assert.equal(buildCgiPath('/cgi-bin/admin/output', { action: '1:/300\\500/300\\' }), '/cgi-bin/admin/output?action=1%3A%2F300%5C500%2F300%5C');
  });

  it('encodes %, # and non-ASCII text as UTF-8', () => {
    assert.equal(encodeCgi('100%'), '100%25');
    assert.equal(encodeCgi('a#b'), 'a%23b');
    assert.equal(encodeCgi('Küche'), 'K%C3%BCche');
    assert.equal(encodeCgi('日'), '%E6%97%A5');
  });

  it('refuses injection attempts by encoding them', () => {
    const built = buildCgiPath('/cgi-bin/admin/servetest', { ip: '1.2.3.4;reboot', port: '80&action=remove&group=Network' });
    assert.equal(built, '/cgi-bin/admin/servetest?ip=1.2.3.4%3Breboot&port=80%26action%3Dremove%26group%3DNetwork');
    const pairs = [...new URLSearchParams(built.slice(built.indexOf('?') + 1))];
    assert.deepEqual(pairs, [
      ['ip', '1.2.3.4;reboot'],
      ['port', '80&action=remove&group=Network'],
    ]);
  });

  it('keeps repeated keys of a pair list in order', () => {
    assert.equal(
      buildCgiPath('/cgi-bin/operator/ptz', [
        ['move', 'left'],
        ['camera', '1'],
        ['move', 'repeat'],
      ]),
      '/cgi-bin/operator/ptz?move=left&camera=1&move=repeat',
    );
  });

  it('repeats the key of an array value, in order', () => {
    assert.equal(buildCgiPath('/cgi-bin/operator/ptz', { move: ['left', 'repeat'], speed: 3 }), '/cgi-bin/operator/ptz?move=left&move=repeat&speed=3');
    assert.equal(buildCgiPath('/x', { k: ['b', 'a', 'c'] }), '/x?k=b&k=a&k=c');
  });

  it('gives a bare key for null, in both forms', () => {
    assert.equal(buildCgiPath('/cgi-bin/operator/ptzconfig', { removeallpreset: null }), '/cgi-bin/operator/ptzconfig?removeallpreset');
    assert.equal(
      buildCgiPath('/x', [
        ['a', null],
        ['b', '1'],
      ]),
      '/x?a&b=1',
    );
  });

  it('omits undefined values', () => {
    assert.equal(buildCgiPath('/x', { action: 'list', group: undefined }), '/x?action=list');
    assert.equal(buildCgiPath('/x', { group: undefined }), '/x');
  });

  it('writes numbers and booleans as text', () => {
    assert.equal(encodeQuery({ n: 0, f: 1.5, t: true, no: false }), 'n=0&f=1.5&t=true&no=false');
  });

  it('keeps an empty value as key=', () => {
    assert.equal(encodeQuery({ 'Image.I0.Text.String': '' }), 'Image.I0.Text.String=');
  });

  it('round-trips tricky values through a standard query parser', () => {
    const values = ['a b', 'a+b', 'x=y&z', '1:/300\\500/300\\', 'Jäsøn', '%41', '~!*()\''];
    const built = buildCgiPath('/x', values.map((v, i) => [`k${i}`, v] as const));
    const decoded = [...new URLSearchParams(built.slice(built.indexOf('?') + 1))].map(([, v]) => v);
    assert.deepEqual(decoded, values);
  });
});

describe('cgi codec: parseKeyValues', () => {
  it('strips root., \\r and blank lines', () => {
    const map = parseKeyValues('root.Network.eth0.IPAddress=10.0.0.5\r\n\r\nroot.Image.I0.Appearance.Resolution=1280x720\r\n\r\n');
    assert.deepEqual([...map], [
      ['Network.eth0.IPAddress', '10.0.0.5'],
      ['Image.I0.Appearance.Resolution', '1280x720'],
    ]);
  });

  it('reads LF-only answers and keys without root.', () => {
    assert.deepEqual([...parseKeyValues('Progress=42%\nBrand.Brand=X\n')], [
      ['Progress', '42%'],
      ['Brand.Brand', 'X'],
    ]);
  });

  it('keeps = inside values', () => {
    const map = parseKeyValues('root.Image.I0.Text.String=a=b==c\r\nroot.Custom.Url=http://x/?q=1&r=2\r\n');
    assert.equal(map.get('Image.I0.Text.String'), 'a=b==c');
    assert.equal(map.get('Custom.Url'), 'http://x/?q=1&r=2');
  });

  it('keeps an empty value; trims the spaces around names and values, not inside (field notes)', () => {
    const map = parseKeyValues('root.Image.I0.Text.String=\r\nroot.Motion.M0.Name= Front door \r\n root.Group.Name = yes \r\n\troot.Tab.Name\t=\ta  b\t\r\n');
    assert.equal(map.get('Image.I0.Text.String'), '');
    assert.equal(map.get('Motion.M0.Name'), 'Front door');
    assert.equal(map.get('Group.Name'), 'yes');
    assert.equal(map.get('Tab.Name'), 'a  b');
    assert.deepEqual([...map.keys()], ['Image.I0.Text.String', 'Motion.M0.Name', 'Group.Name', 'Tab.Name']);
  });

  it('skips a line whose name is only spaces', () => {
    assert.deepEqual([...parseKeyValues('  = orphan\r\nA=1\r\n')], [['A', '1']]);
  });

  it('skips lines without a key (no = or = first)', () => {
    assert.deepEqual([...parseKeyValues('OK\r\n# Error: something\r\n=orphan\r\nA=1\r\n')], [['A', '1']]);
  });

  it('only strips a leading root. prefix', () => {
    const map = parseKeyValues('root.Group.root.Name=1\nrootless.Name=2\n');
    assert.deepEqual([...map.keys()], ['Group.root.Name', 'rootless.Name']);
  });

  it('reads a Buffer as UTF-8 and keeps the order', () => {
    const map = parseKeyValues(Buffer.from('root.B=2\r\nroot.A=Küche\r\nroot.C=3', 'utf8'));
    assert.deepEqual([...map], [
      ['B', '2'],
      ['A', 'Küche'],
      ['C', '3'],
    ]);
  });

  it('gives an empty map for an empty body', () => {
    assert.equal(parseKeyValues('').size, 0);
    assert.equal(parseKeyValues('\r\n\r\n').size, 0);
  });
});
