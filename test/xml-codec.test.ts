import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IpcamError } from '../lib/errors/errors';
import { DeviceClient } from '../lib/transport/client';
import { xmlExchange as xmlCall } from '../lib/answer';
import { buildDocument, buildXml, child, items, parseXml, path, toTyped, xml, XML_NS, type XmlValue } from '../lib/xml/codec';
import { deviceErrorText, failureOf } from '../lib/xml/device-errors';
import { expectRejection } from './helpers';

/** Runs `fn`, expecting it to throw an IpcamError with that code; returns the error. */
function expectIpcamError(fn: () => unknown, code: IpcamError['code']): IpcamError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof IpcamError, `expected an IpcamError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

function typedOf(text: string): Record<string, XmlValue> {
  const value = toTyped(parseXml(text));
  assert.ok(typeof value === 'object' && !Array.isArray(value), 'root should type as an object');
  return value;
}

describe('xml codec: parseXml', () => {
  it('reads the root element, attributes, children in order and text', () => {
    const root = parseXml(`<?xml version="1.0" encoding="UTF-8"?>
<config version="1.0" xmlns="${XML_NS}">
  <a>1</a>
  <b x="y">two</b>
  <a>3</a>
</config>`);
    assert.equal(root.name, 'config');
    assert.deepEqual(root.attrs, { version: '1.0', xmlns: XML_NS });
    assert.deepEqual(
      root.children.map((c) => [c.name, c.text]),
      [
        ['a', '1'],
        ['b', 'two'],
        ['a', '3'],
      ],
    );
    assert.equal(child(root, 'b')?.attrs['x'], 'y');
    assert.equal(root.text, '', 'indentation between children is not text');
  });

  it('accepts a Buffer with a UTF-8 byte order mark', () => {
    const root = parseXml(Buffer.from('\uFEFF<config><name>Küche</name></config>', 'utf8'));
    assert.equal(path(root, 'name')?.text, 'Küche');
  });

  it('follows paths and lists items, always as arrays', () => {
    const root = parseXml('<config><list type="list"><item><v>1</v></item><item><v>2</v></item></list><empty type="list"/></config>');
    assert.equal(path(root, 'list', 'item', 'v')?.text, '1');
    assert.equal(path(root, 'list', 'nothing', 'v'), undefined);
    assert.deepEqual(
      items(child(root, 'list')).map((i) => child(i, 'v')?.text),
      ['1', '2'],
    );
    assert.deepEqual(items(child(root, 'empty')), []);
    assert.deepEqual(items(undefined), []);
  });

  it('trims whitespace and newlines wrapped around CDATA', () => {
    const root = parseXml('<config><plate type="string">\n    <![CDATA[ABC123]]>\n  </plate><tab>\t<![CDATA[x]]>\r\n</tab></config>');
    assert.equal(child(root, 'plate')?.text, 'ABC123');
    assert.equal(child(root, 'tab')?.text, 'x');
  });

  it('keeps whitespace that is inside the CDATA section itself', () => {
    const root = parseXml('<config><owner type="string">\n  <![CDATA[  Jo Doe ]]>\n</owner></config>');
    assert.equal(child(root, 'owner')?.text, '  Jo Doe ');
  });

  it('trims plain text values', () => {
    const root = parseXml('<config><speed type="uint32">\n  5\n</speed></config>');
    assert.equal(child(root, 'speed')?.text, '5');
  });

  it('decodes the XML entities in text and attributes', () => {
    const root = parseXml('<config note="a &lt; b &amp; &quot;c&quot;"><t>x &lt; y &amp;&amp; z &gt; w &apos;q&apos; &quot;r&quot;</t></config>');
    assert.equal(child(root, 't')?.text, `x < y && z > w 'q' "r"`);
    assert.equal(root.attrs['note'], 'a < b & "c"');
  });

  it('decodes an escaped ampersand only once', () => {
    const root = parseXml('<config><t>&amp;lt; &amp;amp; &amp;#65;</t></config>');
    assert.equal(child(root, 't')?.text, '&lt; &amp; &#65;');
  });

  it('decodes numeric character references', () => {
    const root = parseXml('<config><t>&#65;&#x42;&#228;&#xE4;</t></config>');
    assert.equal(child(root, 't')?.text, 'ABää');
  });

  it('refuses a document with a DOCTYPE (EPARSE)', () => {
    const err = expectIpcamError(() => parseXml('<?xml version="1.0"?><!DOCTYPE config><config/>'), 'EPARSE');
    assert.match(err.message, /DTD/);
  });

  it('refuses entity declarations, e.g. a billion-laughs document (EPARSE)', () => {
    const bomb = `<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
]>
<config><t>&lol2;</t></config>`;
    expectIpcamError(() => parseXml(bomb), 'EPARSE');
    expectIpcamError(() => parseXml('<!doctype config [<!entity x SYSTEM "file:///etc/passwd">]><config>&x;</config>'), 'EPARSE');
  });

  for (const [label, text] of [
    ['a mismatched closing tag', '<config><a>1</b></config>'],
    ['a missing closing tag', '<config><a>1</config>'],
    ['a truncated answer', '<config version="1.0"><list type="list" count="2"><item><v>1</v></item>'],
    ['an unterminated attribute', '<config version="1.0><a/></config>'],
    ['plain text', 'Unauthorized'],
    ['an empty body', ''],
    ['only a declaration', '<?xml version="1.0"?>'],
  ] as const) {
    it(`refuses ${label} (EPARSE)`, () => {
      expectIpcamError(() => parseXml(text), 'EPARSE');
    });
  }
});

describe('xml codec: toTyped', () => {
  it('types booleans and numbers per the type attribute', () => {
    const typed = typedOf(`<config>
  <on type="boolean">true</on>
  <off type="boolean">false</off>
  <odd type="boolean">yes</odd>
  <u8 type="uint8">200</u8>
  <u16 type="uint16">65535</u16>
  <u32 type="uint32">4294967295</u32>
  <i32 type="int32">-2147483648</i32>
  <ti64 type="tint64">1700000000000000</ti64>
  <tu32 type="tuint32">42</tu32>
  <i64 type="int64">-9007199254740991</i64>
  <f type="float">1.5</f>
  <word type="string"><![CDATA[007]]></word>
  <untyped>12</untyped>
  <enum type="plateAreaType">Europe</enum>
</config>`);
    assert.deepEqual(typed, {
      on: true,
      off: false,
      odd: 'yes',
      u8: 200,
      u16: 65535,
      u32: 4294967295,
      i32: -2147483648,
      ti64: 1700000000000000,
      tu32: 42,
      i64: -9007199254740991,
      f: 1.5,
      word: '007',
      untyped: '12',
      enum: 'Europe',
    });
  });

  it('keeps a 64-bit value beyond the safe integer range as text, not a rounded number', () => {
    const typed = typedOf('<config><big type="int64">9223372036854775807</big><t type="tuint32">1.5</t></config>');
    assert.equal(typed['big'], '9223372036854775807');
    assert.equal(typed['t'], '1.5', 'not an integer: left as text');
  });

  it('gives lists as arrays with 0, 1 or more items', () => {
    const typed = typedOf(`<config>
  <none type="list" count="0"/>
  <noneOpen type="list" count="0"></noneOpen>
  <one type="list" count="1"><item><plate type="string"><![CDATA[A1]]></plate></item></one>
  <two type="list" count="2"><item><n type="uint32">1</n></item><item><n type="uint32">2</n></item></two>
  <scalars type="list" count="2"><item type="uint32">7</item><item type="boolean">true</item></scalars>
</config>`);
    assert.deepEqual(typed['none'], []);
    assert.deepEqual(typed['noneOpen'], []);
    assert.deepEqual(typed['one'], [{ plate: 'A1' }]);
    assert.deepEqual(typed['two'], [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(typed['scalars'], [7, true]);
  });

  it('nests blocks as objects and repeated names as arrays', () => {
    const typed = typedOf(`<config>
  <vehicle>
    <switch type="boolean">true</switch>
    <dedupMode><switch type="boolean">false</switch><intervalTime type="uint32">5</intervalTime></dedupMode>
  </vehicle>
  <sensorAlarmIn id="1" type="boolean">false</sensorAlarmIn>
  <sensorAlarmIn id="2" type="boolean">true</sensorAlarmIn>
</config>`);
    assert.deepEqual(typed, {
      vehicle: { switch: true, dedupMode: { switch: false, intervalTime: 5 } },
      sensorAlarmIn: [false, true],
    });
  });
});

describe('xml codec: building documents', () => {
  it('buildDocument writes the declaration, version and the namespace', () => {
    const doc = buildDocument('2.0.0', [xml.uint('speed', 4)]);
    assert.ok(doc.startsWith('<?xml version="1.0" encoding="UTF-8"?>'), doc);
    const root = parseXml(doc);
    assert.equal(root.name, 'config');
    assert.equal(root.attrs['version'], '2.0.0');
    assert.equal(root.attrs['xmlns'], 'http://www.ipc.com/ver10');
    assert.equal(XML_NS, 'http://www.ipc.com/ver10');
    assert.equal(child(root, 'speed')?.text, '4');
  });

  it('buildDocument takes another root name (PTZ actionInfo)', () => {
    const root = parseXml(buildDocument('1.0', [xml.uint('speed', 8)], 'actionInfo'));
    assert.equal(root.name, 'actionInfo');
    assert.equal(root.attrs['xmlns'], XML_NS);
  });

  it('xml.str writes type="string" and a CDATA section', () => {
    const doc = buildXml(xml.str('licensePlateNumber', 'AB<1>&'));
    assert.match(doc, /<licensePlateNumber type="string"><!\[CDATA\[AB<1>&\]\]><\/licensePlateNumber>/);
    const el = parseXml(doc);
    assert.equal(el.attrs['type'], 'string');
    assert.equal(el.text, 'AB<1>&');
  });

  it('xml.uint, xml.uint8, xml.bool and xml.text write their types', () => {
    const typed = toTyped(
      parseXml(buildDocument('1.0', [xml.uint('a', 7), xml.uint8('b', 255), xml.bool('c', true), xml.bool('d', false), xml.text('e', 'plateOnly', 'alarmModeType'), xml.text('f', 'x')])),
    );
    assert.deepEqual(typed, { a: 7, b: 255, c: true, d: false, e: 'plateOnly', f: 'x' });
    const doc = buildXml(xml.el('r', [xml.uint8('b', 1), xml.text('e', 'v', 'alarmModeType'), xml.text('f', 'x')]));
    assert.match(doc, /<b type="uint8">1<\/b>/);
    assert.match(doc, /<e type="alarmModeType">v<\/e>/);
    assert.match(doc, /<f>x<\/f>/);
  });

  it('xml.list writes type="list" with count and maxCount, entries as item', () => {
    const doc = buildXml(xml.list('regionInfo', [[xml.uint('X1', 0), xml.uint('Y1', 0)], [xml.uint('X1', 5), xml.uint('Y1', 6)]], 4));
    const el = parseXml(doc);
    assert.equal(el.attrs['type'], 'list');
    assert.equal(el.attrs['count'], '2');
    assert.equal(el.attrs['maxCount'], '4');
    assert.deepEqual(
      el.children.map((c) => c.name),
      ['item', 'item'],
    );
    assert.deepEqual(toTyped(el), [
      { X1: 0, Y1: 0 },
      { X1: 5, Y1: 6 },
    ]);
  });

  it('xml.list without maxCount omits it; an empty list has count 0', () => {
    const el = parseXml(buildXml(xml.list('plates', [])));
    assert.equal(el.attrs['count'], '0');
    assert.equal(el.attrs['maxCount'], undefined);
    assert.deepEqual(toTyped(el), []);
  });

  for (const value of [']]>', 'a]]>b', ']]>]]>', 'x]]>y]]>z', ']]', ']', '>', 'end]]', '<![CDATA[inner]]>', '', 'multi\nline', '  padded  ']) {
    it(`CDATA round-trips ${JSON.stringify(value)} exactly`, () => {
      const doc = buildDocument('1.0', [xml.str('v', value)]);
      // The document must stay well-formed: no CDATA section may be cut short by the value.
      const root = parseXml(doc);
      assert.equal(root.children.length, 1);
      assert.equal(child(root, 'v')?.text, value);
    });
  }

  it('escapes < & " in text and attributes, and reads them back', () => {
    const text = `a<b & "c" 'd' >e`;
    const doc = buildXml({ name: 'r', attrs: { note: `q"u<o&te'` }, children: [xml.text('t', text)] });
    assert.doesNotMatch(doc.replace(/^<\?xml[^>]*>/, ''), /<b|& |"c"/);
    const root = parseXml(doc);
    assert.equal(child(root, 't')?.text, text);
    assert.equal(root.attrs['note'], `q"u<o&te'`);
  });

  it('writes non-ASCII text as UTF-8 and reads it back', () => {
    const owner = 'Jäsøn Dœ 日本 🚗';
    const doc = buildDocument('1.0', [xml.str('carOwner', owner), xml.text('t', 'Zürich')]);
    const bytes = Buffer.from(doc, 'utf8');
    assert.ok(bytes.includes(Buffer.from('日本', 'utf8')));
    const root = parseXml(bytes);
    assert.equal(child(root, 'carOwner')?.text, owner);
    assert.equal(child(root, 't')?.text, 'Zürich');
  });

  it('writes an element without content as an empty element', () => {
    const root = parseXml(buildDocument('1.0', [xml.el('empty'), xml.el('attrs', [], { id: 3 })]));
    assert.deepEqual(
      root.children.map((c) => [c.name, c.text, c.children.length]),
      [
        ['empty', '', 0],
        ['attrs', '', 0],
      ],
    );
    assert.equal(child(root, 'attrs')?.attrs['id'], '3');
  });
});

describe('xml codec: failure documents', () => {
  const failure = (attrs: string): string => `<?xml version="1.0" encoding="UTF-8"?><config version="1.0" xmlns="${XML_NS}" ${attrs}/>`;

  it('failureOf gives EDEVICE with code, description and readable text', () => {
    const err = failureOf(parseXml(failure('status="failed" errorCode="16" errorDesc="Range Error"')), { secrets: [] });
    assert.ok(err instanceof IpcamError);
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.deviceCode, 16);
    assert.equal(err.deviceDesc, 'Range Error');
    assert.equal(err.status, undefined);
    assert.ok(err.message.includes(deviceErrorText(16)), err.message);
    assert.match(err.message, /range/i);
    assert.match(err.message, /16/);
    assert.match(err.message, /Range Error/);
  });

  it('failureOf reads the older firmware document without errorDesc', () => {
    const err = failureOf(parseXml(failure('status="failed" errorCode="203"')), { status: 200, secrets: [] });
    assert.ok(err instanceof IpcamError);
    assert.equal(err.code, 'EDEVICE');
    assert.equal(err.deviceCode, 203);
    assert.equal(err.deviceDesc, undefined);
    assert.equal(err.status, 200);
    assert.match(err.message, /Plate already exists/);
    assert.doesNotMatch(err.message, /undefined/);
  });

  it('failureOf reads status and errorCode given as child elements', () => {
    const err = failureOf(parseXml('<config><status>failed</status><errorCode>14</errorCode></config>'), { secrets: [] });
    assert.equal(err?.code, 'EDEVICE');
    assert.equal(err?.deviceCode, 14);
    assert.match(err?.message ?? '', /Action error/);
  });

  it('failureOf reports credential codes (8 expired, 9 unauthorized, 10 locked) as EAUTH', () => {
    for (const [code, text] of [[8, /Password expired/], [9, /Unauthorized/], [10, /User locked/]] as const) {
      const err = failureOf(parseXml(`<config status="failed" errorCode="${code}"/>`), { status: 200, secrets: [] });
      assert.equal(err?.code, 'EAUTH');
      assert.equal(err?.deviceCode, code);
      assert.match(err?.message ?? '', text);
    }
    assert.equal(failureOf(parseXml('<config status="failed" errorCode="4"/>'), { secrets: [] })?.code, 'EDEVICE');
  });

  it('failureOf names an unknown code without inventing a meaning', () => {
    const err = failureOf(parseXml(failure('status="failed" errorCode="999" errorDesc="Weird"')), { secrets: [] });
    assert.equal(err?.deviceCode, 999);
    assert.match(err?.message ?? '', /999/);
    assert.match(err?.message ?? '', /Weird/);
  });

  it('failureOf passes success documents and data documents', () => {
    assert.equal(failureOf(parseXml(failure('status="success" errorCode="0" errorDesc="No Error"')), { secrets: [] }), undefined);
    assert.equal(failureOf(parseXml('<config version="1.0"><status>success</status></config>'), { secrets: [] }), undefined);
    assert.equal(failureOf(parseXml('<config version="1.7"><deviceInfo><model>X</model></deviceInfo></config>'), { secrets: [] }), undefined);
  });

  it('every code of the field notes has its own text', () => {
    for (const code of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 79, 80, 84, 201, 202, 203, 204, 205, 206, 207]) {
      assert.notEqual(deviceErrorText(code), deviceErrorText(-12345), `code ${code}`);
    }
  });
});

describe('xml codec: xmlCall against an HTTP server', () => {
  let server: Server;
  let client: DeviceClient;
  const answers = new Map<string, { status: number; body: string; contentType?: string }>();
  const received: Array<{ method: string; url: string; contentType: string; body: string }> = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') });
        const answer = answers.get(req.url ?? '') ?? { status: 404, body: 'Not Found', contentType: 'text/plain' };
        res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/xml' });
        res.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new DeviceClient({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, timeout: 5000 });
  });

  after(async () => {
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    answers.clear();
    received.length = 0;
  });

  const failed = (code: number, desc?: string): string =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<config version="1.0" xmlns="${XML_NS}" status="failed" errorCode="${code}"${desc === undefined ? '' : ` errorDesc="${desc}"`}/>`;

  it('a failure document with HTTP 200 is EDEVICE', async () => {
    answers.set('/AddLicensePlates', { status: 200, body: failed(203, 'plate exists') });
    const err = await expectRejection(xmlCall(client, { path: '/AddLicensePlates', body: buildDocument('1.0', []) }), 'EDEVICE');
    assert.equal(err.deviceCode, 203);
    assert.equal(err.deviceDesc, 'plate exists');
    assert.equal(err.status, 200);
    assert.match(err.message, /Plate already exists/);
  });

  it('a failure document with HTTP 400 is EDEVICE, not EHTTP', async () => {
    answers.set('/GetSmartVehicleConfig', { status: 400, body: failed(1, 'Invalid Request') });
    const err = await expectRejection(xmlCall(client, { path: '/GetSmartVehicleConfig' }), 'EDEVICE');
    assert.equal(err.deviceCode, 1);
    assert.equal(err.deviceDesc, 'Invalid Request');
    assert.equal(err.status, 400);
    assert.match(err.message, /Invalid request/);
  });

  it('an older firmware failure document without errorDesc is EDEVICE', async () => {
    answers.set('/PtzControl/1/Left', { status: 400, body: failed(16) });
    const err = await expectRejection(xmlCall(client, { path: '/PtzControl/1/Left' }), 'EDEVICE');
    assert.equal(err.deviceCode, 16);
    assert.equal(err.deviceDesc, undefined);
    assert.match(err.message, /Range error/);
  });

  it('a success document passes and the request carries the XML body', async () => {
    answers.set('/SetThing', { status: 200, body: `<?xml version="1.0"?><config version="1.0" xmlns="${XML_NS}" status="success" errorCode="0" errorDesc="No Error"/>` });
    const body = buildDocument('1.0', [xml.str('name', 'x & y')]);
    const root = await xmlCall(client, { path: '/SetThing', body });
    assert.equal(root.attrs['status'], 'success');
    assert.equal(received.length, 1);
    assert.equal(received[0]?.method, 'POST');
    assert.match(received[0]?.contentType ?? '', /^application\/xml/);
    assert.equal(received[0]?.body, body);
  });

  it('a data document passes and GET sends no body', async () => {
    answers.set('/GetDeviceInfo', { status: 200, body: `<config version="1.7" xmlns="${XML_NS}"><deviceInfo><model type="string"><![CDATA[M1]]></model></deviceInfo></config>` });
    const root = await xmlCall(client, { path: '/GetDeviceInfo', method: 'GET' });
    assert.equal(path(root, 'deviceInfo', 'model')?.text, 'M1');
    assert.equal(received[0]?.method, 'GET');
    assert.equal(received[0]?.body, '');
  });

  it('a non-XML error page is EHTTP with its status', async () => {
    answers.set('/Missing', { status: 404, body: 'Not Found', contentType: 'text/plain' });
    const err = await expectRejection(xmlCall(client, { path: '/Missing' }), 'EHTTP');
    assert.equal(err.status, 404);
  });

  it('an XML 500 without failure attributes is EHTTP', async () => {
    answers.set('/Broken', { status: 500, body: '<config version="1.0"/>' });
    const err = await expectRejection(xmlCall(client, { path: '/Broken' }), 'EHTTP');
    assert.equal(err.status, 500);
  });

  it('a 200 answer that is not XML is EPARSE', async () => {
    answers.set('/Text', { status: 200, body: 'OK', contentType: 'text/plain' });
    await expectRejection(xmlCall(client, { path: '/Text' }), 'EPARSE');
  });

  it('a truncated 200 answer is EPARSE, not a partial result', async () => {
    answers.set('/Cut', { status: 200, body: `<config version="1.0" xmlns="${XML_NS}"><plates type="list" count="2"><item>` });
    await expectRejection(xmlCall(client, { path: '/Cut' }), 'EPARSE');
  });
});
