/**
 * The server tests (spec 4.9) from the operation table: the exact request of each (every value
 * percent-encoded), the SMTP and FTP procedures against the simulator over real sockets in their
 * order (filewrite, servetest, fileread until the log ends), bounded polling of a log that never
 * ends, bad input as EINPUT with nothing sent, and the passwords given appearing in no result,
 * error or progress text.
 */
import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WITHHELD_LINE } from '../lib/errors/echo';
import { IpcamError } from '../lib/errors/errors';
import { contextFor, runOperation } from '../lib/ops';
import { DEFAULT_MESSAGE, DEFAULT_SUBJECT, FTP_TEST_DATA, httpCodeOf, LOG_POLL_MS, logVerdict, secretForms, storageTestOk } from '../lib/ops/servetest';
import type { RecordedRequest, Simulator } from '../lib/simulator';
import type { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD, waitFor } from './helpers';
import { requestOp as op, requestTarget as target } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

/** The requests the device accepted (a Digest challenge answered first is not one), as path?rawQuery. */
function accepted(sim: Simulator): string[] {
  return sim.state.requests.filter((r: RecordedRequest) => r.auth !== 'rejected').map((r) => (r.rawQuery ? `${r.path}?${r.rawQuery}` : r.path));
}

async function listen(status: number): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(status);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const SERVETEST = '/cgi-bin/admin/servetest';
const FILEREAD = '/cgi-bin/admin/fileread';

describe('operations: server tests', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  beforeEach(function () {
    sim.state.serveTests.hang = false;
    sim.state.serveTests.echoPasswords = false;
  });

  describe('requests as the spec writes them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['testHttpServer', { server: '192.168.1.10', port: 8080 }, `${SERVETEST}?cmd=http&ServerName=192.168.1.10&ServerPort=8080`],
      [
        'testHttpServer',
        { server: 'events.example.com', port: '80', user: 'cam', password: 'p#ss w%rd/1!*', proxy: 'proxy.lan', proxyPort: 3128, proxyUser: 'pu', proxyPassword: 'q=1+2' },
        `${SERVETEST}?cmd=http&ServerName=events.example.com&ServerPort=80&UserName=cam&Password=p%23ss%20w%25rd%2F1!*&ProxyAddr=proxy.lan&ProxyPort=3128&ProxyUser=pu&ProxyPass=q%3D1%2B2`,
      ],
      ['testNetworkStorage', { type: 'cifs', server: '//nas/cam share', user: 'u', password: 'pw#x', workgroup: 'WORK GROUP' }, `${SERVETEST}?fstype=cifs&ServerName=%2F%2Fnas%2Fcam%20share&UserName=u&Password=pw%23x&Workgroup=WORK%20GROUP`],
      ['testNetworkStorage', { type: 'nfs', server: '192.168.1.5:/export/cam' }, `${SERVETEST}?fstype=nfs&ServerName=192.168.1.5%3A%2Fexport%2Fcam`],
      ['cancelSmtpTest', {}, `${SERVETEST}?cmd=clearsmtp`],
      ['cancelFtpTest', undefined, `${SERVETEST}?cmd=clearftp`],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${expected}`, function () {
        assert.equal(target(name, input), expected);
      });
    }

    it('no server test is destructive', function () {
      for (const name of ['testHttpServer', 'testNetworkStorage', 'testSmtp', 'cancelSmtpTest', 'testFtp', 'cancelFtpTest']) assert.equal(op(name).destructive, false, name);
    });
  });

  describe('reading the answers', function () {
    it('an HTTP code is the first line, not a number inside a failure text', function () {
      assert.equal(httpCodeOf('200'), 200);
      assert.equal(httpCodeOf('\r\n404 Not Found\r\n'), 404);
      assert.equal(httpCodeOf('HTTP/1.1 503 Service Unavailable'), 503);
      assert.equal(httpCodeOf('HTTP code: 401'), 401);
      assert.equal(httpCodeOf('Connection to 127.0.0.1:443 failed'), undefined);
      assert.equal(httpCodeOf('1234'), undefined);
      assert.equal(httpCodeOf(''), undefined);
    });

    it('a storage test is ok when its first line says so', function () {
      assert.equal(storageTestOk('Network storage test OK\nMounted'), true);
      assert.equal(storageTestOk('\nNFS test success'), true);
      assert.equal(storageTestOk('Network storage test failed: OK button'), false);
      assert.equal(storageTestOk('Test not OK'), false);
      assert.equal(storageTestOk('Mounted\nNetwork storage test OK'), false);
      assert.equal(storageTestOk(''), false);
    });

    it('a test log ends with its success line or a failure line', function () {
      assert.equal(logVerdict('Connecting\nSMTP Test Success\n', 'SMTP Test Success'), 'success');
      assert.equal(logVerdict('Connecting\nSMTP Test Failed\n\n', 'SMTP Test Success'), 'failure');
      assert.equal(logVerdict('Connecting\nError: cannot connect', 'SMTP Test Success'), 'failure');
      assert.equal(logVerdict('Connecting\nFTP test aborted\n', 'FTP Test Success'), 'failure');
      assert.equal(logVerdict('Connecting\n220 ready\n', 'SMTP Test Success'), undefined);
      assert.equal(logVerdict('Connecting\nSubject: Door failure alert\n', 'SMTP Test Success'), undefined);
      assert.equal(logVerdict('Connecting\nFailed to connect to server\n', 'SMTP Test Success'), 'failure');
      assert.equal(logVerdict('', 'SMTP Test Success'), undefined);
    });
  });

  describe('testHttpServer against the simulator', function () {
    it('gives the HTTP code the server answered the device', async function () {
      const { server, port } = await listen(204);
      try {
        const result = await runOperation(client, op('testHttpServer'), { server: '127.0.0.1', port });
        assert.deepEqual(result.payload, { status: 204 });
      } finally {
        server.close();
      }
    });

    it('a server that does not answer is EDEVICE naming it', async function () {
      const { server, port } = await listen(200);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await expectRejection(runOperation(client, op('testHttpServer'), { server: '127.0.0.1', port }), 'EDEVICE', new RegExp(`no HTTP answer from 127\\.0\\.0\\.1:${port}: Connection to`));
    });

    it('remote servers are offline in the simulator unless it is told their code', async function () {
      await expectRejection(runOperation(client, op('testHttpServer'), { server: 'events.example.com', port: 80 }), 'EDEVICE');
      sim.state.serveTests.httpServers.set('events.example.com', 401);
      try {
        assert.deepEqual((await runOperation(client, op('testHttpServer'), { server: 'events.example.com', port: 80 })).payload, { status: 401 });
      } finally {
        sim.state.serveTests.httpServers.clear();
      }
    });
  });

  describe('testNetworkStorage against the simulator', function () {
    it('a share that mounts is ok, with the device text', async function () {
      const { payload } = await runOperation(client, op('testNetworkStorage'), { type: 'cifs', server: '//nas/cameras', user: 'cam', password: 'pw', workgroup: 'HOME' });
      const result = payload as { ok: boolean; text: string };
      assert.equal(result.ok, true);
      assert.match(result.text, /^Network storage test OK\r\nMounted cifs share \/\/nas\/cameras as cam/);
    });

    it('a share that does not is ok: false, with the device text', async function () {
      const { payload } = await runOperation(client, op('testNetworkStorage'), { type: 'nfs', server: 'bad.example.com:/export' });
      const result = payload as { ok: boolean; text: string };
      assert.equal(result.ok, false);
      assert.match(result.text, /Network storage test failed/);
    });

    it('a value the device refuses is EDEVICE naming it', async function () {
      await expectRejection(contextFor(client).cgi({ path: SERVETEST, query: [['fstype', 'cifs'], ['ServerName', 'nas;reboot']], what: 'storage test', names: ['ServerName'] }), 'EDEVICE', /storage test with an error: error setting 'ServerName'/);
    });
  });

  describe('the SMTP procedure against the simulator', function () {
    it('writes subject and message, starts the test, reads the log until its success line', async function () {
      const progress: number[] = [];
      const input = { server: 'mail.example.com', port: 587, ssl: true, user: 'cam', password: 'pw', to: 'me@example.com', from: 'cam@example.com', subject: 'Gate & door: 100%', message: 'Line 1\nLine 2 / ok' };
      const { payload } = await runOperation(client, op('testSmtp'), input, { onProgress: (p) => progress.push(p) });
      const result = payload as { ok: boolean; log: string };
      assert.equal(result.ok, true);
      assert.match(result.log, /^Connecting to mail\.example\.com:587 with SSL\n/);
      assert.match(result.log, /Subject: Gate & door: 100%\n/);
      assert.match(result.log, /SMTP Test Success\n$/);
      assert.equal(sim.state.files.read('/tmp/subject.txt'), input.subject);
      assert.equal(sim.state.files.read('/tmp/message.txt'), input.message);

      const sent = accepted(sim);
      // The filewrite and fileread steps are the requests of writeFile and readFile: one builder.
      assert.equal(sent[0], target('writeFile', { path: '/tmp/subject.txt', data: input.subject }));
      assert.equal(sent[1], target('writeFile', { path: '/tmp/message.txt', data: input.message }));
      assert.equal(sent[2], `${SERVETEST}?cmd=smtp&ServerName=mail.example.com&ServerPort=587&ServerSSL=on&UserName=cam&Password=pw&RcptToAddr1=me%40example.com&AdminAddr=cam%40example.com`);
      const reads = sent.slice(3);
      assert.ok(reads.length >= 1);
      for (const read of reads) assert.equal(read, target('readFile', { path: '/testsmtp.log' }));
      assert.ok(progress.length > 0, 'no progress reported');
      assert.ok(progress.every((p) => p >= 0 && p <= 100));
    });

    it('defaults: port 25, no SSL, a subject and a message', async function () {
      const { payload } = await runOperation(client, op('testSmtp'), { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com' });
      assert.equal((payload as { ok: boolean }).ok, true);
      assert.equal(sim.state.files.read('/tmp/subject.txt'), DEFAULT_SUBJECT);
      assert.equal(sim.state.files.read('/tmp/message.txt'), DEFAULT_MESSAGE);
      assert.equal(accepted(sim)[2], `${SERVETEST}?cmd=smtp&ServerName=mail.example.com&ServerPort=25&ServerSSL=off&RcptToAddr1=me%40example.com&AdminAddr=cam%40example.com`);
    });

    it('a subject with a failure word in it is no failure line', async function () {
      const { payload } = await runOperation(client, op('testSmtp'), { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com', subject: 'Error: gate failure' });
      assert.equal((payload as { ok: boolean }).ok, true);
    });

    it('a server that refuses ends the log with a failure line: ok false, with the log', async function () {
      const { payload } = await runOperation(client, op('testSmtp'), { server: 'bad.example.com', to: 'me@example.com', from: 'cam@example.com' });
      const result = payload as { ok: boolean; log: string };
      assert.equal(result.ok, false);
      assert.match(result.log, /Connection refused\)\nSMTP Test Failed\n$/);
    });

    it('a log that never ends is read for the timeout only, then the test is stopped: ETIMEOUT', async function () {
      sim.state.serveTests.hang = true;
      const err = await expectRejection(runOperation(client, op('testSmtp'), { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com', timeout: 2 }), 'ETIMEOUT', /SMTP test log did not end within 2 s; the test was stopped/);
      assert.doesNotMatch(err.message, /Connecting/);
      const sent = accepted(sim);
      assert.equal(sent[sent.length - 1], `${SERVETEST}?cmd=clearsmtp`);
      const reads = sent.filter((t) => t.startsWith(FILEREAD)).length;
      assert.ok(reads >= 2 && reads <= Math.ceil(2000 / LOG_POLL_MS) + 1, `${reads} reads`);
      assert.equal(sim.state.serveTests.running('smtp'), false);
    });

    it('cancelSmtpTest stops a running test, whose log then ends: ok false', async function () {
      sim.state.serveTests.hang = true;
      const running = runOperation(client, op('testSmtp'), { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com', timeout: 30 });
      await waitFor('the SMTP test to run', () => sim.state.serveTests.running('smtp'));
      assert.deepEqual((await runOperation(client, op('cancelSmtpTest'), {})).payload, { ok: true });
      const result = (await running).payload as { ok: boolean; log: string };
      assert.equal(result.ok, false);
      assert.match(result.log, /SMTP test aborted\n$/);
    });

    it('an abort signal stops the reading', async function () {
      sim.state.serveTests.hang = true;
      const abort = new AbortController();
      const running = runOperation(client, op('testSmtp'), { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com', timeout: 30 }, { signal: abort.signal });
      await waitFor('the SMTP test to run', () => sim.state.serveTests.running('smtp'));
      abort.abort();
      const caught = await running.then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(caught instanceof IpcamError);
      await runOperation(client, op('cancelSmtpTest'), {});
    });
  });

  describe('the FTP procedure against the simulator', function () {
    it('writes /var/ftptest, starts the test, reads the log until its success line', async function () {
      const { payload } = await runOperation(client, op('testFtp'), { server: 'ftp.example.com', user: 'cam', password: 'pw', target: 'cams/test file.txt' });
      const result = payload as { ok: boolean; log: string };
      assert.equal(result.ok, true);
      assert.match(result.log, /227 Entering Passive Mode\nSTOR cams\/test file\.txt \(\d+ bytes\)\n226 Transfer complete\nFTP Test Success\n$/);
      const sent = accepted(sim);
      assert.equal(sent[0], target('writeFile', { path: '/var/ftptest', data: FTP_TEST_DATA }));
      assert.equal(sent[1], `${SERVETEST}?cmd=ftp&ServerName=ftp.example.com&UserName=cam&Password=pw&Passive=on&SourceName=%2Fvar%2Fftptest&TargetName=cams%2Ftest%20file.txt`);
      for (const read of sent.slice(2)) assert.equal(read, target('readFile', { path: '/testftp.log' }));
      assert.ok(sent.length >= 3);
    });

    it('active mode and the default target name', async function () {
      const { payload } = await runOperation(client, op('testFtp'), { server: 'ftp.example.com', passive: false });
      assert.match((payload as { log: string }).log, /USER anonymous\n230 Login successful\n200 PORT command successful\nSTOR ftptest\.txt/);
      assert.equal(accepted(sim)[1], `${SERVETEST}?cmd=ftp&ServerName=ftp.example.com&Passive=off&SourceName=%2Fvar%2Fftptest&TargetName=ftptest.txt`);
    });

    it('a server that refuses: ok false', async function () {
      const { payload } = await runOperation(client, op('testFtp'), { server: 'bad.example.com' });
      assert.equal((payload as { ok: boolean }).ok, false);
      assert.match((payload as { log: string }).log, /FTP Test Failed\n$/);
    });

    it('a log that never ends: ETIMEOUT and clearftp', async function () {
      sim.state.serveTests.hang = true;
      await expectRejection(runOperation(client, op('testFtp'), { server: 'ftp.example.com', timeout: '2' }), 'ETIMEOUT', /FTP test log did not end within 2 s/);
      const sent = accepted(sim);
      assert.equal(sent[sent.length - 1], `${SERVETEST}?cmd=clearftp`);
      assert.equal(sim.state.serveTests.running('ftp'), false);
    });

    it('cancelFtpTest stops a running test', async function () {
      sim.state.serveTests.hang = true;
      const running = runOperation(client, op('testFtp'), { server: 'ftp.example.com', timeout: 30 });
      await waitFor('the FTP test to run', () => sim.state.serveTests.running('ftp'));
      await runOperation(client, op('cancelFtpTest'), {});
      assert.equal(((await running).payload as { ok: boolean }).ok, false);
    });
  });

  describe('the passwords given appear in no result, error or progress text', function () {
    const PASSWORD = 'Tr0ub4dor#3 x%/!';
    const PROXY_PASSWORD = 'PrOxY-s3cret';
    const forms = [...secretForms(PASSWORD, 'cam'), ...secretForms(PROXY_PASSWORD, 'pu'), SIM_PASSWORD];

    function assertClean(text: string, where: string): void {
      const lower = text.toLowerCase();
      for (const form of forms) assert.ok(!lower.includes(form.toLowerCase()), `${where} holds a password form: ${text}`);
    }

    async function outcome(name: string, input: unknown): Promise<string> {
      const stages: string[] = [];
      try {
        const result = await runOperation(client, op(name), input, { onProgress: (p, stage) => stages.push(`${p} ${stage}`) });
        return `${JSON.stringify(result)}\n${stages.join('\n')}`;
      } catch (err) {
        assert.ok(err instanceof IpcamError, String(err));
        return `${err.message}\n${JSON.stringify(err)}\n${String(err.stack)}\n${stages.join('\n')}`;
      }
    }

    it('the simulator does echo them (the leak this guards against is real)', async function () {
      sim.state.serveTests.echoPasswords = true;
      await runOperation(client, op('testSmtp'), { server: 'mail.example.com', user: 'cam', password: PASSWORD, to: 'me@example.com', from: 'cam@example.com' });
      const log = sim.state.files.read('/testsmtp.log') ?? '';
      assert.ok(log.includes(`Password: ${PASSWORD}`));
      assert.ok(log.includes(Buffer.from(`\0cam\0${PASSWORD}`).toString('base64')));
    });

    const cases: Array<[string, string, unknown, RegExp]> = [
      ['storage ok', 'testNetworkStorage', { type: 'cifs', server: '//nas/cam', user: 'cam', password: PASSWORD }, /line withheld/],
      ['storage error line', 'testNetworkStorage', { type: 'cifs', server: 'bad.example.com/share', user: 'cam', password: PASSWORD }, /EDEVICE/],
      ['http no answer', 'testHttpServer', { server: 'events.example.com', port: 80, user: 'cam', password: PASSWORD, proxy: 'proxy.lan', proxyPort: 8080, proxyUser: 'pu', proxyPassword: PROXY_PASSWORD }, /EDEVICE/],
      ['smtp log', 'testSmtp', { server: 'mail.example.com', user: 'cam', password: PASSWORD, to: 'me@example.com', from: 'cam@example.com' }, /line withheld/],
      ['smtp timeout', 'testSmtp', { server: 'mail.example.com', user: 'cam', password: PASSWORD, to: 'me@example.com', from: 'cam@example.com', timeout: 2, hang: true }, /ETIMEOUT/],
      ['ftp log', 'testFtp', { server: 'ftp.example.com', user: 'cam', password: PASSWORD }, /line withheld/],
      ['bad input', 'testSmtp', { server: 'mail.example.com', user: 'cam', password: `${PASSWORD}\n`, to: 'me@example.com', from: 'cam@example.com' }, /EINPUT/],
      ['bad input', 'testHttpServer', { server: 'x', port: 0, password: PASSWORD.repeat(20) }, /EINPUT/],
    ];
    for (const [label, name, input, expected] of cases) {
      it(`${name}: ${label}`, async function () {
        const { hang, ...rest } = input as { hang?: boolean };
        sim.state.serveTests.echoPasswords = true;
        sim.state.serveTests.hang = hang === true;
        const text = await outcome(name, rest);
        assert.match(text, expected);
        assertClean(text, `${name} ${label}`);
        if (/line withheld/.test(expected.source)) assert.ok(text.includes(WITHHELD_LINE));
      });
    }
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const smtp = { server: 'mail.example.com', to: 'me@example.com', from: 'cam@example.com' };
    const cases: Array<[string, unknown, RegExp?]> = [
      ['testHttpServer', {}],
      ['testHttpServer', { server: '192.168.1.10' }],
      ['testHttpServer', { server: '192.168.1.10', port: 0 }],
      ['testHttpServer', { server: '192.168.1.10', port: 65536 }],
      ['testHttpServer', { server: '192.168.1.10', port: '80; reboot' }],
      ['testHttpServer', { server: '1.2.3.4;reboot', port: 80 }, /host name or IP/],
      ['testHttpServer', { server: '$(reboot)', port: 80 }],
      ['testHttpServer', { server: 'a b', port: 80 }],
      ['testHttpServer', { server: 'host\r\nX: y', port: 80 }],
      ['testHttpServer', { server: 'h', port: 80, user: 'a`id`' }],
      ['testHttpServer', { server: 'h', port: 80, user: 'a|b' }],
      ['testHttpServer', { server: 'h', port: 80, password: 'a\u0000b' }],
      ['testHttpServer', { server: 'h', port: 80, password: 'x'.repeat(129) }],
      ['testHttpServer', { server: 'h', port: 80, proxyPort: 3128 }, /proxyPort needs proxy/],
      ['testHttpServer', { server: 'h', port: 80, proxyPassword: 'x' }, /proxyPassword needs proxy/],
      ['testHttpServer', { server: 'h', port: 80, proxy: 'p', proxyPort: 70000 }],
      ['testHttpServer', { server: 'h', port: 80, path: '/x' }, /unknown key/],
      ['testNetworkStorage', { server: '//nas/x' }],
      ['testNetworkStorage', { type: 'smb', server: '//nas/x' }],
      ['testNetworkStorage', { type: 'cifs', server: '//nas/x;reboot' }],
      ['testNetworkStorage', { type: 'cifs', server: '//nas/x', workgroup: 'W;G' }],
      ['testNetworkStorage', { type: 'cifs', server: 'x'.repeat(254) }],
      ['testSmtp', { ...smtp, to: 'not an address' }, /mail address/],
      ['testSmtp', { ...smtp, from: 'a@b;reboot' }],
      ['testSmtp', { ...smtp, to: undefined }],
      ['testSmtp', { ...smtp, ssl: 'yes' }],
      ['testSmtp', { ...smtp, port: 0 }],
      ['testSmtp', { ...smtp, subject: 'two\nlines' }, /control character/],
      ['testSmtp', { ...smtp, message: 'x'.repeat(2001) }],
      ['testSmtp', { ...smtp, message: 'bell\u0007' }],
      // Within 2000 characters, but far beyond the URL once encoded: refused before the first filewrite.
      ['testSmtp', { ...smtp, message: '€'.repeat(1000) }, /message is too long once encoded/],
      ['testSmtp', { ...smtp, timeout: 1 }],
      ['testSmtp', { ...smtp, timeout: 301 }],
      ['testSmtp', { ...smtp, cc: 'x@y.z' }, /unknown key/],
      ['testFtp', {}],
      ['testFtp', { server: 'ftp.example.com', target: '../etc/passwd' }],
      ['testFtp', { server: 'ftp.example.com', target: 'a;b' }],
      ['testFtp', { server: 'ftp.example.com', passive: 'on' }],
      ['testFtp', { server: 'ftp.example.com', source: '/etc/shadow' }, /unknown key/],
      ['cancelSmtpTest', { now: true }],
      ['cancelFtpTest', { now: true }],
    ];
    for (const [name, input, message] of cases) {
      it(`${name} ${JSON.stringify(input).slice(0, 90)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT', message);
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
