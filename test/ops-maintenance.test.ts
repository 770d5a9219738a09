/**
 * Maintenance (spec 4.3) from the operation table: the exact request of each (multipart uploads
 * with the file part named and its bytes), the results against the simulator over real sockets,
 * the firmware upgrade's progress (upload, then the device's Progress=NN%) in order and its
 * bounded wait, the destructive flags, and bad input as EINPUT with nothing sent.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { REQUEST_OPERATIONS, chooseOperation, runOperation, targetOf } from '../lib/ops';
import { FIRMWARE_POLLING, attachmentName, parseProgress } from '../lib/ops/maintenance';
import type { FieldLimits } from '../lib/input/params';
import type { Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD, SIM_USER } from './helpers';
import { requestOp as op } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

const MiB = 1024 * 1024;
/**
 * The file caps as docs/operations.md gives them, written here and not taken from lib/ops (the
 * simulator enforces the same constants: a wrong number there would pass every other test).
 */
const DOCUMENTED_CAPS = { restore: 16 * MiB, upgradeFirmware: 256 * MiB, uploadLanguage: 16 * MiB } as const;

/** A test's input in its title, Buffers by their size. */
function shown(input: unknown): string {
  if (typeof input !== 'object' || input === null) return String(input);
  return `{ ${Object.entries(input).map(([k, v]) => `${k}: ${Buffer.isBuffer(v) ? `<Buffer of ${v.length}>` : JSON.stringify(v)}`).join(', ')} }`;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Bytes no text encoding keeps as they are: the upload must carry them unchanged. */
function binary(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 131 + 7) & 0xff;
  return out;
}

describe('operations: maintenance', function () {
  let sim: Simulator;
  let client: DeviceClient;
  const polling = { ...FIRMWARE_POLLING };

  useSimulatorAndClient((made) => ({ sim, client } = made));

  beforeEach(function () {
    sim.clearFaults();
    // A quick device and quick polls: the bounds are the same code, shortened.
    sim.state.maintenance.upgradeMs = 400;
    sim.state.maintenance.stallAt = undefined;
    Object.assign(FIRMWARE_POLLING, { intervalMs: 50, maxPolls: 100, maxMs: 30_000, maxFailures: 3 });
  });

  afterEach(function () {
    Object.assign(FIRMWARE_POLLING, polling);
  });

  describe('requests as the spec writes them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['factoryReset', {}, '/cgi-bin/admin/restoredevconf'],
      ['backup', undefined, '/cgi-bin/admin/backup'],
      ['firmwareProgress', {}, '/cgi-bin/admin/firmwareupgrade?action=progress'],
      ['reboot', {}, '/cgi-bin/admin/reboot'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} -> GET ${expected}`, function () {
        const request = op(name).build?.(input);
        assert.ok(request);
        assert.equal(request.method ?? 'GET', 'GET');
        assert.equal(targetOf(request), expected);
      });
    }

    for (const [name, path, filename] of [
      ['restore', '/cgi-bin/admin/restore', 'backup.tar'],
      ['uploadLanguage', '/cgi-bin/admin/language', 'language.pack'],
    ] as const) {
      it(`${name} -> POST ${path}, multipart/form-data with the file part`, function () {
        const file = binary(1000);
        const request = op(name).build?.({ file });
        assert.ok(request && request.body && 'file' in request.body);
        assert.equal(request.method, 'POST');
        assert.equal(targetOf(request), path);
        const part = request.body.file;
        assert.equal(part.field, 'file');
        assert.equal(part.filename, filename);
        // The file itself, not a copy: the upload streams it.
        assert.equal(part.data, file);
        assert.ok((request.timeout ?? 0) > 10_000, 'an upload gets a longer timeout');
      });
    }

    it('the upgrade is a procedure (preset, upload, progress), not one request', function () {
      assert.equal(op('upgradeFirmware').build, undefined);
    });

    it('file sizes are capped at the documented figures, and the caps are data for the editor', function () {
      const fileCap = (name: string): number | undefined => {
        const limits = op(name).params.limits;
        const file = limits.type === 'object' ? (limits.fields['file'] as FieldLimits | undefined) : undefined;
        return file?.type === 'buffer' ? file.maxBytes : undefined;
      };
      for (const [name, cap] of Object.entries(DOCUMENTED_CAPS)) {
        assert.equal(fileCap(name), cap, name);
        // A file of exactly the cap is taken (checked, not sent), one byte more is EINPUT.
        assert.ok(Buffer.isBuffer((op(name).params.parse({ file: Buffer.alloc(cap) }, 'payload') as { file: unknown }).file), name);
        assert.throws(() => op(name).params.parse({ file: Buffer.alloc(cap + 1) }, 'payload'), { code: 'EINPUT' }, name);
      }
    });
  });

  describe('answers read', function () {
    it('Progress=NN% (field notes), with or without %, any case; anything else is EPARSE', function () {
      assert.equal(parseProgress('Progress=42%\r\n'), 42);
      assert.equal(parseProgress('progress=100'), 100);
      assert.equal(parseProgress('\nProgress = 7 %\n'), 7);
      for (const bad of ['', 'Progress=101%', 'Progress=-1%', 'Progress=abc', 'OK']) assert.throws(() => parseProgress(bad), /Progress=NN%/);
    });

    it('the attachment name is a plain file name or nothing', function () {
      assert.equal(attachmentName('attachment; filename="backup"'), 'backup');
      assert.equal(attachmentName('attachment; filename=cfg.tar'), 'cfg.tar');
      assert.equal(attachmentName("attachment; filename*=UTF-8''k%C3%A4mera.tar"), 'kämera.tar');
      assert.equal(attachmentName('attachment; filename="../../etc/passwd"'), 'passwd');
      assert.equal(attachmentName('attachment; filename="a\\\\b"'), 'b');
      assert.equal(attachmentName('attachment; filename=".."'), undefined);
      assert.equal(attachmentName('attachment'), undefined);
      assert.equal(attachmentName(undefined), undefined);
    });
  });

  describe('against the simulator', function () {
    it('backup gives the archive as a Buffer with its file name and content type', async function () {
      const before = sim.state.maintenance.backups;
      const result = await runOperation(client, op('backup'), {});
      assert.ok(Buffer.isBuffer(result.payload));
      assert.equal(result.filename, 'backup.tar');
      assert.equal(result.contentType, 'application/x-tar');
      assert.equal((result.payload as Buffer).toString('latin1', 257, 262), 'ustar');
      assert.match((result.payload as Buffer).toString('utf8'), /Image\.I0\.Appearance\.Resolution=640x360/);
      assert.equal(sim.state.maintenance.backups - before, 1);
    });

    it('restore uploads the backup as multipart/form-data and the device applies it', async function () {
      const { payload } = await runOperation(client, op('backup'), {});
      const archive = payload as Buffer;
      sim.state.params.set('Image.I0.Appearance.Resolution', '1920x1080');
      sim.resetRequests();

      const result = await runOperation(client, op('restore'), { file: archive });
      assert.deepEqual(result.payload, { ok: true });
      assert.equal(sim.state.params.get('Image.I0.Appearance.Resolution'), '640x360');
      const [request] = sim.state.requests;
      assert.ok(request);
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/cgi-bin/admin/restore');
      assert.match(String(request.headers['content-type']), /^multipart\/form-data; boundary=/);
      assert.equal(Number(request.headers['content-length']) > archive.length, true);
      assert.match(request.body, /Content-Disposition: form-data; name="file"; filename="backup.tar"\r\n/);
      const upload = sim.state.maintenance.uploads.get('restore');
      assert.deepEqual(upload && { field: upload.field, filename: upload.filename, size: upload.size, sha256: upload.sha256 }, { field: 'file', filename: 'backup.tar', size: archive.length, sha256: sha256(archive) });
    });

    it('restore of a file that is no backup is EDEVICE (the device says so in a 200 answer)', async function () {
      await expectRejection(runOperation(client, op('restore'), { file: binary(2000) }), 'EDEVICE', /restore/);
    });

    it('factoryReset returns the parameters to their defaults', async function () {
      sim.state.params.set('Image.I0.Text.String', 'Gate');
      sim.state.params.set('Motion.M9.Name', 'added');
      const result = await runOperation(client, op('factoryReset'), {});
      assert.deepEqual(result.payload, { ok: true });
      assert.equal(sim.state.params.get('Image.I0.Text.String'), '');
      assert.equal(sim.state.params.has('Motion.M9.Name'), false);
      assert.equal(sim.state.requests[0]?.path, '/cgi-bin/admin/restoredevconf');
    });

    it('reboot reboots', async function () {
      const before = sim.state.maintenance.reboots;
      assert.deepEqual((await runOperation(client, op('reboot'), {})).payload, { ok: true });
      assert.equal(sim.state.maintenance.reboots, before + 1);
    });

    it('uploadLanguage stores the pack, bytes unchanged', async function () {
      const pack = binary(70_000);
      assert.deepEqual((await runOperation(client, op('uploadLanguage'), { file: pack })).payload, { ok: true });
      assert.deepEqual(sim.state.maintenance.languagePacks.get('language.pack'), pack);
      assert.equal(sim.state.requests[0]?.method, 'POST');
      assert.equal(sim.state.requests[0]?.path, '/cgi-bin/admin/language');
    });

    it('upgradeFirmware: preset, upload, progress polled to 100; progress reported upload first, then the device, in order', async function () {
      const image = binary(600_000);
      const seen: Array<[number, string]> = [];
      const rebootsBefore = sim.state.maintenance.reboots;
      const result = await runOperation(client, op('upgradeFirmware'), { file: image }, { onProgress: (percent, stage) => seen.push([percent, stage]) });
      assert.deepEqual(result.payload, { ok: true, progress: 100 });

      const calls = sim.state.requests.filter((r) => r.auth !== 'rejected').map((r) => `${r.method} ${r.path}${r.rawQuery ? `?${r.rawQuery}` : ''}`);
      assert.equal(calls[0], 'GET /cgi-bin/admin/firmwareupgrade?action=preset');
      assert.equal(calls[1], 'POST /cgi-bin/admin/firmwareupgrade');
      assert.ok(calls.length >= 3);
      assert.ok(calls.slice(2).every((c) => c === 'GET /cgi-bin/admin/firmwareupgrade?action=progress'), calls.join('\n'));
      const upload = sim.state.maintenance.uploads.get('firmware');
      assert.equal(upload?.filename, 'firmware.bin');
      assert.equal(upload?.sha256, sha256(image));
      assert.equal(sim.state.maintenance.reboots, rebootsBefore + 1, 'the device reboots after 100%');

      const stages = seen.map(([, stage]) => stage);
      const firstDevice = stages.indexOf('device');
      assert.ok(firstDevice > 1, 'upload progress comes first');
      assert.ok(stages.slice(0, firstDevice).every((s) => s === 'upload'));
      assert.ok(stages.slice(firstDevice).every((s) => s === 'device'));
      const uploads = seen.slice(0, firstDevice).map(([p]) => p);
      const device = seen.slice(firstDevice).map(([p]) => p);
      assert.equal(uploads[0], 0);
      assert.equal(uploads[uploads.length - 1], 100);
      assert.ok(uploads.length > 3, `upload progress in steps: ${uploads.join(',')}`);
      for (const list of [uploads, device]) for (let i = 1; i < list.length; i++) assert.ok((list[i] as number) > (list[i - 1] as number), `increasing: ${list.join(',')}`);
      assert.equal(device[device.length - 1], 100);
      assert.ok(device.length >= 2, `the device's progress in steps: ${device.join(',')}`);
    });

    it('upgradeFirmware with resetSettings sends action=default and the device returns to its defaults', async function () {
      sim.state.params.set('Image.I0.Text.String', 'Gate');
      await runOperation(client, op('upgradeFirmware'), { file: binary(1000), resetSettings: 'true' });
      const upload = sim.state.requests.find((r) => r.method === 'POST' && r.auth !== 'rejected');
      assert.equal(upload?.rawQuery, 'action=default');
      assert.equal(sim.state.params.get('Image.I0.Text.String'), '');
    });

    it('a few failed polls while the device is busy are waited out', async function () {
      let injected = false;
      const result = await runOperation(client, op('upgradeFirmware'), { file: binary(1000) }, {
        onProgress: (_percent, stage) => {
          if (stage === 'device' && !injected) {
            injected = true;
            sim.inject({ kind: 'status', status: 503, path: '/cgi-bin/admin/firmwareupgrade', times: 2 });
          }
        },
      });
      assert.deepEqual(result.payload, { ok: true, progress: 100 });
      assert.ok(injected);
    });

    it('a device that never reaches 100% ends with a clear ETIMEOUT after the bounded number of polls', async function () {
      sim.state.maintenance.stallAt = 42;
      FIRMWARE_POLLING.maxPolls = 8;
      const seen: number[] = [];
      const err = await expectRejection(
        runOperation(client, op('upgradeFirmware'), { file: binary(1000) }, { onProgress: (p, stage) => stage === 'device' && seen.push(p) }),
        'ETIMEOUT',
        /did not reach 100% .*last 42%/,
      );
      assert.doesNotMatch(err.message, new RegExp(SIM_PASSWORD.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      const polls = sim.state.requests.filter((r) => r.rawQuery === 'action=progress' && r.auth !== 'rejected');
      assert.equal(polls.length, 8);
      assert.equal(seen[seen.length - 1], 42);
      // The device finishes later: leave it idle for the next test.
      sim.state.maintenance.stallAt = undefined;
      sim.state.maintenance.progress(Date.now() + 60_000);
    });

    it('a device failing every poll ends with its error after maxFailures in a row', async function () {
      FIRMWARE_POLLING.maxFailures = 2;
      let injected = false;
      await expectRejection(
        runOperation(client, op('upgradeFirmware'), { file: binary(1000) }, {
          onProgress: (_p, stage) => {
            if (stage === 'device' && !injected) {
              injected = true;
              sim.inject({ kind: 'status', status: 503, path: '/cgi-bin/admin/firmwareupgrade' });
            }
          },
        }),
        'EHTTP',
        /503/,
      );
      sim.clearFaults();
      // One poll read, then three failed in a row: the third is one too many.
      const polls = sim.state.requests.filter((r) => r.rawQuery === 'action=progress');
      assert.equal(polls.length, 4);
      sim.state.maintenance.progress(Date.now() + 60_000);
    });

    it('a refused preparation stops the upgrade before the upload', async function () {
      sim.inject({ kind: 'status', status: 500, path: '/cgi-bin/admin/firmwareupgrade', times: 1 });
      await expectRejection(runOperation(client, op('upgradeFirmware'), { file: binary(1000) }), 'EHTTP');
      assert.equal(sim.state.requests.filter((r) => r.method === 'POST').length, 0);
    });

    it('firmwareProgress reads the percentage', async function () {
      const { payload } = await runOperation(client, op('firmwareProgress'), {});
      assert.deepEqual(payload, { progress: 100 });
    });
  });

  describe('destructive operations', function () {
    const destructive = ['factoryReset', 'restore', 'upgradeFirmware', 'reboot'];
    for (const name of ['factoryReset', 'backup', 'restore', 'upgradeFirmware', 'firmwareProgress', 'reboot', 'uploadLanguage']) {
      it(`${name} is ${destructive.includes(name) ? '' : 'not '}destructive`, function () {
        assert.equal(op(name).destructive, destructive.includes(name));
        assert.equal(op(name).access, 'admin');
      });
    }

    for (const name of destructive) {
      it(`${name} named by msg is refused with nothing sent; named by the node it is chosen`, function () {
        assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', name), (err: Error & { code?: string }) => err.code === 'EINPUT' && /only from a node/.test(err.message));
        assert.equal(chooseOperation(REQUEST_OPERATIONS, name, undefined), op(name));
        assert.equal(sim.state.requestCount, 0);
      });
    }

    it('backup (class files: its archive holds stored credentials) and uploadLanguage (class change) are refused from msg, chosen by the node; firmwareProgress (read) may come from msg', function () {
      for (const name of ['backup', 'uploadLanguage']) {
        assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', name), (err: Error & { code?: string }) => err.code === 'EINPUT' && /only read operations/.test(err.message), name);
        assert.equal(chooseOperation(REQUEST_OPERATIONS, name, undefined), op(name));
      }
      assert.equal(chooseOperation(REQUEST_OPERATIONS, 'msg', 'firmwareProgress'), op('firmwareProgress'));
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const cases: Array<[string, unknown]> = [
      ['factoryReset', { now: true }],
      ['backup', { file: Buffer.from('x') }],
      ['reboot', { delay: 5 }],
      ['firmwareProgress', { verbose: true }],
      ['restore', {}],
      ['restore', { file: 'a backup' }],
      ['restore', { file: [1, 2, 3] }],
      ['restore', { file: Buffer.alloc(0) }],
      ['restore', { file: Buffer.alloc(DOCUMENTED_CAPS.restore + 1) }],
      ['upgradeFirmware', {}],
      ['upgradeFirmware', { file: Buffer.from('fw'), resetSettings: 'maybe' }],
      ['upgradeFirmware', { file: Buffer.from('fw'), resetSettings: 1 }],
      ['upgradeFirmware', { file: Buffer.from('fw'), reset: true }],
      ['upgradeFirmware', { file: { length: 3 } }],
      ['uploadLanguage', { file: null }],
      ['uploadLanguage', { file: Buffer.alloc(DOCUMENTED_CAPS.uploadLanguage + 1) }],
    ];
    for (const [name, input] of cases) {
      it(`${name} ${shown(input)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT');
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });

  it('the device password appears in no result or error', async function () {
    const texts: string[] = [];
    texts.push(JSON.stringify((await runOperation(client, op('firmwareProgress'), {})).payload));
    const backupResult = await runOperation(client, op('backup'), {});
    texts.push((backupResult.payload as Buffer).toString('utf8'), String(backupResult.filename), String(backupResult.contentType));
    const stranger = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: `${SIM_PASSWORD}!` });
    try {
      for (const attempt of [
        () => runOperation(client, op('restore'), { file: binary(10) }),
        () => runOperation(client, op('restore'), { file: 'x' }),
        () => runOperation(stranger, op('reboot'), {}),
      ]) {
        const err = await attempt().then(() => assert.fail('expected a failure'), (e: Error) => e);
        texts.push(err.message, JSON.stringify(err));
      }
    } finally {
      await stranger.close();
    }
    for (const text of texts) assert.ok(!text.includes(SIM_PASSWORD), text.slice(0, 200));
  });
});
