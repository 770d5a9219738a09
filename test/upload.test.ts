/**
 * Issue 18 item 8: uploads are framed around the file's own Buffer and streamed, and a device
 * reads the body once, even on the first request of a fresh client to a Digest device: a cheap
 * authenticated read goes first (the operation's probe), so the body never meets a 401.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { FIRMWARE_POLLING, UPLOAD_FILENAMES, backup, restore, upgradeFirmware, uploadLanguage } from '../lib/ops/maintenance';
import { runOperation } from '../lib/ops/runner';
import { startSimulator, type RecordedRequest, type Simulator } from '../lib/simulator';
import type { SimulatorAuth } from '../lib/simulator/server-auth';
import type { AuthMode } from '../lib/transport/auth';
import { DeviceClient } from '../lib/transport/client';
import { frameUpload } from '../lib/transport/upload';
import { SIM_PASSWORD, SIM_USER, expectRejection } from './helpers';

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Bytes of every value, so that no text encoding on the way keeps them as they are. */
function binary(size: number): Buffer {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 131 + 7) & 0xff;
  return data;
}

describe('uploads: streamed, and read by the device exactly once', function () {
  this.timeout(20_000);
  let sim: Simulator | undefined;
  let client: DeviceClient | undefined;
  const polling = { ...FIRMWARE_POLLING };

  afterEach(async function () {
    Object.assign(FIRMWARE_POLLING, polling);
    await client?.close();
    await sim?.close();
    client = undefined;
    sim = undefined;
  });

  async function fresh(simAuth: SimulatorAuth, auth: AuthMode = 'auto', password = SIM_PASSWORD): Promise<{ sim: Simulator; client: DeviceClient }> {
    sim = await startSimulator({ username: SIM_USER, password: SIM_PASSWORD, auth: simAuth });
    sim.state.maintenance.upgradeMs = 100;
    client = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password, auth });
    return { sim, client };
  }

  /** The requests with a body to `path`, and the body bytes the device read for them. */
  function bodies(s: Simulator, path: string): { requests: RecordedRequest[]; bytes: number } {
    const requests = s.state.requests.filter((r) => r.path === path && r.bodyBytes > 0);
    return { requests, bytes: requests.reduce((sum, r) => sum + r.bodyBytes, 0) };
  }

  for (const simAuth of ['digest', 'any', 'basic', 'none'] as const) {
    it(`restore on a fresh client to a device with auth ${simAuth}: the body is read once, and applied`, async function () {
      const { sim: s, client: c } = await fresh(simAuth);
      // The backup comes from another client: this one has sent nothing yet.
      const other = new DeviceClient({ host: '127.0.0.1', port: s.port, username: SIM_USER, password: SIM_PASSWORD });
      const archive = (await runOperation(other, backup, {})).payload as Buffer;
      await other.close();
      s.resetRequests();

      assert.deepEqual((await runOperation(c, restore, { file: archive })).payload, { ok: true });
      const { requests, bytes } = bodies(s, '/cgi-bin/admin/restore');
      assert.equal(requests.length, 1, `the body went ${requests.length} times`);
      const [upload] = requests as [RecordedRequest];
      assert.equal(upload.auth, simAuth === 'any' ? 'digest' : simAuth, 'the one body carried the credentials the device wanted');
      assert.equal(bytes, Number(upload.headers['content-length']));
      assert.ok(bytes > archive.length && bytes < archive.length + 512, `${bytes} bytes read for an archive of ${archive.length}`);
      const stored = s.state.maintenance.uploads.get('restore');
      assert.deepEqual(stored && { size: stored.size, sha256: stored.sha256, filename: stored.filename }, { size: archive.length, sha256: sha256(archive), filename: UPLOAD_FILENAMES.restore });
    });
  }

  it('firmware and a language pack on fresh clients to a Digest device: one body each, the bytes unchanged', async function () {
    const { sim: s, client: c } = await fresh('digest');
    Object.assign(FIRMWARE_POLLING, { intervalMs: 20, maxPolls: 200, maxMs: 10_000, maxFailures: 3 });
    const image = binary(3 * 1024 * 1024 + 17);
    await runOperation(c, upgradeFirmware, { file: image });
    const firmware = bodies(s, '/cgi-bin/admin/firmwareupgrade');
    assert.equal(firmware.requests.length, 1);
    assert.equal(firmware.bytes, frameUpload({ field: 'file', filename: UPLOAD_FILENAMES.firmware, data: image }).length);
    assert.equal(s.state.maintenance.uploads.get('firmware')?.sha256, sha256(image));

    const second = new DeviceClient({ host: '127.0.0.1', port: s.port, username: SIM_USER, password: SIM_PASSWORD });
    try {
      const pack = binary(200_000);
      await runOperation(second, uploadLanguage, { file: pack });
      const language = bodies(s, '/cgi-bin/admin/language');
      assert.equal(language.requests.length, 1);
      assert.equal(s.state.maintenance.uploads.get('language')?.sha256, sha256(pack));
    } finally {
      await second.close();
    }
  });

  it('a wrong password on a fresh client: EAUTH, and the body never leaves', async function () {
    const { sim: s, client: c } = await fresh('digest', 'auto', 'wrong password');
    await expectRejection(runOperation(c, uploadLanguage, { file: binary(100_000) }), 'EAUTH');
    assert.equal(bodies(s, '/cgi-bin/admin/language').requests.length, 0);
    assert.ok(s.state.requests.length <= 2, `${s.state.requests.length} requests`);
  });

  it('the framing is RFC 7578 with the file as it is: one part, name and filename quoted, CRLF, a closing delimiter', function () {
    const data = Buffer.from('--not-a-boundary\r\n\r\nbytes', 'latin1');
    const framed = frameUpload({ field: 'file', filename: 'a"b\r\n.bin', data });
    const boundary = /^multipart\/form-data; boundary=(\S+)$/.exec(framed.contentType)?.[1];
    assert.ok(boundary && boundary.length >= 27 && boundary.length <= 70, 'a boundary of RFC 2046 length');
    const body = Buffer.concat(framed.pieces);
    assert.equal(body.length, framed.length);
    assert.equal(framed.pieces[1], data, 'the file is one of the pieces, not a copy');
    assert.equal(
      body.toString('latin1'),
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a%22b%0D%0A.bin"\r\nContent-Type: application/octet-stream\r\n\r\n` + data.toString('latin1') + `\r\n--${boundary}--\r\n`,
    );
  });
});
