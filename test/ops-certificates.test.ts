/**
 * Certificates (spec 4.10) from the operation table: the exact request of each entry, the parsed
 * dump against the simulator over real sockets, the parser on other dump styles and hostile
 * answers, bad input as EINPUT with nothing sent, and the destructive guard.
 */
import { strict as assert } from 'node:assert';
import { chooseOperation, REQUEST_OPERATIONS, runOperation } from '../lib/ops';
import { CERT_DUMP_MAX_LINES, parseCertificateDump, type CertificateInfo } from '../lib/ops/certificates';
import type { Simulator } from '../lib/simulator';
import type { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD } from './helpers';
import { requestOp as op, requestTarget as target } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

const GOOD = { country: 'SE', state: 'Skane', locality: 'Lund', organization: 'Acme AB', unit: 'Gate control', commonName: 'cam1.example.com', days: 365 };

/** A dump as OpenSSL 1.1 prints it: `C=SE, ...` without spaces, a short serial on its label's line, `RSA Public-Key`. */
const OPENSSL_11_DUMP = [
  'Certificate:',
  '    Data:',
  '        Version: 3 (0x2)',
  '        Serial Number: 4660 (0x1234)',
  '    Signature Algorithm: sha256WithRSAEncryption',
  '        Issuer: C=DE, O=Example CA, CN=Example Root',
  '        Validity',
  '            Not Before: Mar  4 10:00:00 2024 GMT',
  '            Not After : Mar  4 10:00:00 2027 GMT',
  '        Subject: C=DE, ST=Bayern, O=Example, CN=cam2.example.de',
  '        Subject Public Key Info:',
  '            Public Key Algorithm: id-ecPublicKey',
  '                Public-Key: (256 bit)',
  '                pub:',
  '                    04:aa:bb',
  '        X509v3 extensions:',
  '            X509v3 Subject Alternative Name:',
  '                DNS:cam2.example.de',
  '    Signature Algorithm: ecdsa-with-SHA256',
  '         30:45:02:21',
].join('\r\n');

describe('operations: certificates', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  it('the entries are in the table: selfSignCertificate destructive, certificateInfo not', function () {
    assert.deepEqual([op('selfSignCertificate').destructive, op('selfSignCertificate').access, op('certificateInfo').destructive, op('certificateInfo').access], [true, 'admin', false, 'admin']);
  });

  describe('requests as the spec writes them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['selfSignCertificate', GOOD, '/cgi-bin/admin/sslselfsign?CNTR=SE&STAT=Skane&LOCA=Lund&ORGA=Acme%20AB&ORUN=Gate%20control&CMNM=cam1.example.com&VALI=365'],
      [
        'selfSignCertificate',
        { ...GOOD, state: 'Île-de-France', organization: 'Zoë, Inc.', commonName: '192.168.1.20', days: '1000' },
        '/cgi-bin/admin/sslselfsign?CNTR=SE&STAT=%C3%8Ele-de-France&LOCA=Lund&ORGA=Zo%C3%AB%2C%20Inc.&ORUN=Gate%20control&CMNM=192.168.1.20&VALI=1000',
      ],
      ['selfSignCertificate', { ...GOOD, days: 1 }, '/cgi-bin/admin/sslselfsign?CNTR=SE&STAT=Skane&LOCA=Lund&ORGA=Acme%20AB&ORUN=Gate%20control&CMNM=cam1.example.com&VALI=1'],
      ['certificateInfo', {}, '/cgi-bin/admin/sslcertinfo'],
      ['certificateInfo', undefined, '/cgi-bin/admin/sslcertinfo'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${expected}`, function () {
        assert.equal(target(name, input), expected);
      });
    }
  });

  describe('against the simulator', function () {
    it('certificateInfo reads the factory certificate', async function () {
      const info = (await runOperation(client, op('certificateInfo'), {})).payload as CertificateInfo;
      assert.equal(info.subject, 'C = SE, ST = Skane, L = Lund, O = ipcam-simulator, OU = Cameras, CN = ipcam-sim.local');
      assert.equal(info.issuer, info.subject);
      assert.equal(info.selfSigned, true);
      assert.equal(info.version, 3);
      assert.equal(info.signatureAlgorithm, 'sha256WithRSAEncryption');
      assert.equal(info.publicKeyAlgorithm, 'rsaEncryption');
      assert.equal(info.keyBits, 2048);
      assert.equal(info.validFrom, 'Jan  1 00:00:00 2025 GMT');
      assert.equal(info.validTo, 'Sep 28 00:00:00 2027 GMT');
      assert.equal(info.serial, [...sim.state.certificates.serial].map((b) => b.toString(16).padStart(2, '0')).join(':'));
      assert.match(info.text, /^Certificate:\n {4}Data:/);
      assert.match(info.text, /Modulus:/);
    });

    it('selfSignCertificate makes a new certificate that certificateInfo then shows', async function () {
      const made = await runOperation(client, op('selfSignCertificate'), GOOD);
      assert.deepEqual(made.payload, { ok: true, text: 'Self-signed certificate created for cam1.example.com, valid 365 days' });
      assert.equal(sim.state.certificates.created, 1);
      assert.deepEqual(sim.state.certificates.subject, { country: 'SE', state: 'Skane', locality: 'Lund', organization: 'Acme AB', unit: 'Gate control', commonName: 'cam1.example.com' });

      const info = (await runOperation(client, op('certificateInfo'), {})).payload as CertificateInfo;
      assert.equal(info.subject, 'C = SE, ST = Skane, L = Lund, O = Acme AB, OU = Gate control, CN = cam1.example.com');
      assert.equal(info.selfSigned, true);
      const from = Date.parse(`${info.validFrom?.replace(' GMT', '')} UTC`);
      const to = Date.parse(`${info.validTo?.replace(' GMT', '')} UTC`);
      assert.equal((to - from) / 86_400_000, 365);
      assert.ok(Math.abs(from - Date.now()) < 10 * 60_000, info.validFrom);
    });

    it('the simulator refuses a VALI or CNTR out of the spec with an error line: EDEVICE', async function () {
      const ctx = (await import('../lib/ops')).contextFor(client);
      await expectRejection(ctx.cgi({ path: '/cgi-bin/admin/sslselfsign', query: { CNTR: 'SE', VALI: 1001 }, what: 'self-signed certificate' }), 'EDEVICE', /VALI/);
      await expectRejection(ctx.cgi({ path: '/cgi-bin/admin/sslselfsign', query: { CNTR: 'Sweden' }, what: 'self-signed certificate' }), 'EDEVICE', /CNTR/);
      await expectRejection(ctx.cgi({ path: '/cgi-bin/admin/sslselfsign', query: { ORGA: 'a/CN=evil' }, what: 'self-signed certificate' }), 'EDEVICE', /ORGA/);
    });

    it('an error line in the certificate answer (no certificate yet) is EDEVICE; a new one is then read', async function () {
      sim.state.certificates.installed = false;
      await expectRejection(runOperation(client, op('certificateInfo'), {}), 'EDEVICE', /certificate read with an error: No certificate installed/);
      await runOperation(client, op('selfSignCertificate'), { ...GOOD, commonName: 'fresh.example' });
      const info = (await runOperation(client, op('certificateInfo'), {})).payload as CertificateInfo;
      assert.match(info.subject ?? '', /CN = fresh\.example$/);
    });

    it('an answer that is no dump is EPARSE', async function () {
      sim.inject({ kind: 'status', status: 200, path: '/cgi-bin/admin/sslcertinfo', times: 1 });
      await expectRejection(runOperation(client, op('certificateInfo'), {}), 'EPARSE', /no certificate dump/);
    });

    it('the device password appears in no result or error', async function () {
      const texts = [JSON.stringify((await runOperation(client, op('certificateInfo'), {})).payload), JSON.stringify((await runOperation(client, op('selfSignCertificate'), GOOD)).payload)];
      const err = await expectRejection(runOperation(client, op('selfSignCertificate'), { ...GOOD, organization: SIM_PASSWORD }), 'EINPUT');
      texts.push(err.message);
      for (const text of texts) assert.ok(!text.includes(SIM_PASSWORD), text.slice(0, 200));
    });
  });

  describe('the dump parser', function () {
    it('reads an OpenSSL 1.1 style dump (short serial, no spaces around =, EC key)', function () {
      const info = parseCertificateDump(OPENSSL_11_DUMP);
      const { text, ...fields } = info;
      assert.deepEqual(fields, {
        version: 3,
        serial: '4660 (0x1234)',
        signatureAlgorithm: 'sha256WithRSAEncryption',
        issuer: 'C=DE, O=Example CA, CN=Example Root',
        validFrom: 'Mar  4 10:00:00 2024 GMT',
        validTo: 'Mar  4 10:00:00 2027 GMT',
        subject: 'C=DE, ST=Bayern, O=Example, CN=cam2.example.de',
        publicKeyAlgorithm: 'id-ecPublicKey',
        keyBits: 256,
        selfSigned: false,
      });
      assert.equal(text, OPENSSL_11_DUMP);
    });

    it('a serial wrapped over two lines is read whole', function () {
      const info = parseCertificateDump('        Serial Number:\n            5a:35:fa:80:85:d5:b0:d0:4f:2e:f2:28:9c:0a:af:\n            ff\n        Signature Algorithm: x\n');
      assert.equal(info.serial, '5a:35:fa:80:85:d5:b0:d0:4f:2e:f2:28:9c:0a:af:ff');
    });

    it('an answer that is no certificate dump is EPARSE', function () {
      assert.throws(() => parseCertificateDump(''), { code: 'EPARSE' });
      assert.throws(() => parseCertificateDump('OK\r\n'), { code: 'EPARSE' });
      assert.throws(() => parseCertificateDump('<html><body>Not here</body></html>'), { code: 'EPARSE' });
    });

    it('a hostile dump is bounded: long lines and many lines cost little and give short values', function () {
      const longLine = `        Subject: ${'A'.repeat(1_000_000)}`;
      const info = parseCertificateDump(`${longLine}\n`);
      assert.ok((info.subject?.length ?? 0) <= 512);
      const many = `${'        Version: 3 (0x2)\n'.repeat(CERT_DUMP_MAX_LINES)}        Subject: CN=late\n`;
      assert.throws(() => parseCertificateDump(many), { code: 'EPARSE' }, 'lines past the bound are not read');
      const colons = `Issuer: ${':'.repeat(100_000)}\n${' '.repeat(100_000)}:\n`;
      assert.equal(parseCertificateDump(colons).issuer?.length, 512);
    });
  });

  describe('the destructive guard', function () {
    it('selfSignCertificate chosen by msg is refused with nothing sent; set in the node it runs', async function () {
      const created = sim.state.certificates.created;
      await expectRejection(
        (async () => runOperation(client, chooseOperation(REQUEST_OPERATIONS, 'msg', 'selfSignCertificate'), GOOD))(),
        'EINPUT',
        /selfSignCertificate/,
      );
      assert.equal(sim.state.requestCount, 0);
      assert.equal(sim.state.certificates.created, created);
      await runOperation(client, chooseOperation(REQUEST_OPERATIONS, 'selfSignCertificate', undefined), GOOD);
      assert.equal(sim.state.certificates.created, created + 1);
      assert.equal(chooseOperation(REQUEST_OPERATIONS, 'msg', 'certificateInfo').name, 'certificateInfo');
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const cases: Array<[string, unknown]> = [
      ['selfSignCertificate', {}],
      ['selfSignCertificate', { ...GOOD, country: 'se' }],
      ['selfSignCertificate', { ...GOOD, country: 'SWE' }],
      ['selfSignCertificate', { ...GOOD, country: 'S' }],
      ['selfSignCertificate', { ...GOOD, country: '12' }],
      ['selfSignCertificate', { ...GOOD, days: 0 }],
      ['selfSignCertificate', { ...GOOD, days: 1001 }],
      ['selfSignCertificate', { ...GOOD, days: 36.5 }],
      ['selfSignCertificate', { ...GOOD, days: '1e3' }],
      ['selfSignCertificate', { ...GOOD, days: undefined }],
      ['selfSignCertificate', { ...GOOD, commonName: '' }],
      ['selfSignCertificate', { ...GOOD, commonName: 'x'.repeat(65) }],
      ['selfSignCertificate', { ...GOOD, state: 'x'.repeat(129) }],
      ['selfSignCertificate', { ...GOOD, organization: 'x'.repeat(10_000_000) }],
      ['selfSignCertificate', { ...GOOD, organization: 'Acme/CN=evil.example' }],
      ['selfSignCertificate', { ...GOOD, organization: 'Acme+CN=x' }],
      ['selfSignCertificate', { ...GOOD, unit: 'a;reboot' }],
      ['selfSignCertificate', { ...GOOD, unit: '$(reboot)' }],
      ['selfSignCertificate', { ...GOOD, unit: '`reboot`' }],
      ['selfSignCertificate', { ...GOOD, locality: 'Lund\nCN=x' }],
      ['selfSignCertificate', { ...GOOD, locality: 'Lu\u0000nd' }],
      ['selfSignCertificate', { ...GOOD, extra: 1 }],
      ['selfSignCertificate', { ...GOOD, unit: undefined }],
      ['certificateInfo', { verbose: true }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${JSON.stringify(input)?.slice(0, 120)}`, async function () {
        const err = await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.ok(err.message.length < 400, err.message.slice(0, 100));
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
