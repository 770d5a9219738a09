/**
 * readFile and writeFile (spec 4.12) from the operation table: the exact request (paths with
 * spaces, `/`, `&`, `%`), the round trip against the simulator over real sockets, `None` read as
 * '', the URL bound after encoding, bad input as EINPUT with nothing sent, and the destructive
 * guard of writeFile.
 */
import { strict as assert } from 'node:assert';
import { IpcamError } from '../lib/errors/errors';
import { chooseOperation, contextFor, REQUEST_OPERATIONS, runOperation } from '../lib/ops';
import { FILE_DATA_MAX, FILE_PATH_MAX } from '../lib/ops/files';
import type { Simulator } from '../lib/simulator';
import { MAX_SIM_FILES } from '../lib/simulator/files';
import { MAX_TARGET, type DeviceClient } from '../lib/transport/client';
import { expectRejection } from './helpers';
import { requestOp as op, requestTarget as target } from './ops-helper';
import { useSimulatorAndClient } from './ops-fixture';

describe('operations: readFile, writeFile', function () {
  let sim: Simulator;
  let client: DeviceClient;

  useSimulatorAndClient((made) => ({ sim, client } = made));

  describe('requests as the spec writes them', function () {
    const cases: Array<[string, unknown, string]> = [
      ['readFile', { path: '/tmp/note.txt' }, '/cgi-bin/admin/fileread?READ.filePath=%2Ftmp%2Fnote.txt'],
      ['readFile', { path: '/tmp/my notes/a&b%c=d.txt' }, '/cgi-bin/admin/fileread?READ.filePath=%2Ftmp%2Fmy%20notes%2Fa%26b%25c%3Dd.txt'],
      ['readFile', { path: '/tmp/..hidden' }, '/cgi-bin/admin/fileread?READ.filePath=%2Ftmp%2F..hidden'],
      ['writeFile', { path: '/tmp/n.txt', data: 'a&b=c%d\nline 2/+' }, '/cgi-bin/admin/filewrite?SAVE.filePath=%2Ftmp%2Fn.txt&SAVE.fileData=a%26b%3Dc%25d%0Aline%202%2F%2B'],
      ['writeFile', { path: '/var/x y', data: '' }, '/cgi-bin/admin/filewrite?SAVE.filePath=%2Fvar%2Fx%20y&SAVE.fileData='],
      ['writeFile', { path: '/tmp/w', data: 'wörd €\t;$(id)' }, '/cgi-bin/admin/filewrite?SAVE.filePath=%2Ftmp%2Fw&SAVE.fileData=w%C3%B6rd%20%E2%82%AC%09%3B%24(id)'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name} ${JSON.stringify(input)} -> ${expected}`, function () {
        assert.equal(target(name, input), expected);
      });
    }

    it('writeFile is destructive, readFile is not', function () {
      assert.equal(op('writeFile').destructive, true);
      assert.equal(op('readFile').destructive, false);
    });
  });

  describe('against the simulator', function () {
    it('what writeFile writes, readFile reads back, every character kept', async function () {
      const data = 'line 1 & 2 = 100%\r\nwörd € /x/ +plus+\ttab\n';
      const written = await runOperation(client, op('writeFile'), { path: '/tmp/a b&c.txt', data });
      assert.deepEqual(written.payload, { ok: true });
      assert.equal(sim.state.files.read('/tmp/a b&c.txt'), data);
      const read = await runOperation(client, op('readFile'), { path: '/tmp/a b&c.txt' });
      assert.equal(read.payload, data);
      assert.deepEqual(
        sim.state.requests.filter((r) => r.auth !== 'rejected').map((r) => r.path),
        ['/cgi-bin/admin/filewrite', '/cgi-bin/admin/fileread'],
      );
    });

    it("the device's None (an empty or missing file) is ''", async function () {
      // The simulator answers exactly what the field notes say real firmware does.
      const raw = await client.request({ path: '/cgi-bin/admin/fileread?READ.filePath=%2Fno%2Fsuch' });
      assert.equal(raw.body.toString('utf8').trim(), 'None');
      assert.equal((await runOperation(client, op('readFile'), { path: '/no/such' })).payload, '');
      await runOperation(client, op('writeFile'), { path: '/tmp/empty', data: '' });
      assert.equal(sim.state.files.read('/tmp/empty'), '');
      assert.equal((await runOperation(client, op('readFile'), { path: '/tmp/empty' })).payload, '');
    });

    it('data up to the URL bound is written whole', async function () {
      const data = 'x'.repeat(FILE_DATA_MAX);
      await runOperation(client, op('writeFile'), { path: '/tmp/big', data });
      assert.equal(sim.state.files.read('/tmp/big'), data);
    });

    it('an error line in the 200 answer (device flash full) is EDEVICE', async function () {
      const files = sim.state.files.files;
      const before = new Map(files);
      try {
        for (let i = 0; files.size < MAX_SIM_FILES; i++) files.set(`/fill/${i}`, '');
        await expectRejection(runOperation(client, op('writeFile'), { path: '/tmp/one-more', data: 'x' }), 'EDEVICE', /file write.*No space left/);
      } finally {
        files.clear();
        for (const [k, v] of before) files.set(k, v);
      }
    });

    it('a file whose text begins with "Error" is read as content, not taken for an error line', async function () {
      sim.state.files.write('/tmp/errors.log', '# Error: disk full at 03:00\nError 2\n');
      const { payload } = await runOperation(client, op('readFile'), { path: '/tmp/errors.log' });
      assert.equal(payload, '# Error: disk full at 03:00\nError 2\n');
    });

    it('an invalid file name sent past our checks is 404 from the device (spec 7)', async function () {
      await expectRejection(contextFor(client).cgi({ path: '/cgi-bin/admin/fileread', query: [['READ.filePath', '../etc/passwd']] }), 'EHTTP', /404/);
    });
  });

  describe('the destructive guard', function () {
    it('writeFile chosen by msg is EINPUT and nothing is sent', function () {
      assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', 'writeFile'), (err: Error & { code?: string }) => err.code === 'EINPUT' && /nothing was sent/.test(err.message));
      assert.equal(sim.state.requestCount, 0);
    });

    it('writeFile set in the node runs; a msg naming another operation there is refused; readFile (class files) may not come from msg', async function () {
      assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'writeFile', 'readFile'), (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT');
      const chosen = chooseOperation(REQUEST_OPERATIONS, 'writeFile', undefined);
      assert.equal(chosen.name, 'writeFile');
      await runOperation(client, chosen, { path: '/tmp/guard', data: 'ok' });
      assert.equal(sim.state.files.read('/tmp/guard'), 'ok');
      assert.throws(() => chooseOperation(REQUEST_OPERATIONS, 'msg', 'readFile'), (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT' && /class files/.test(err.message));
      assert.equal(chooseOperation(REQUEST_OPERATIONS, 'readFile', undefined).name, 'readFile');
    });
  });

  describe('bad input is EINPUT and nothing is sent', function () {
    const long = `/${'a'.repeat(FILE_PATH_MAX)}`;
    const cases: Array<[string, unknown, RegExp?]> = [
      ['readFile', {}],
      ['readFile', { path: 'tmp/relative.txt' }, /absolute path/],
      ['readFile', { path: '' }],
      ['readFile', { path: '/tmp/../etc/passwd' }, /\.\. segments/],
      ['readFile', { path: '/..' }],
      ['readFile', { path: '/tmp/..' }],
      ['readFile', { path: '/tmp/a\nb' }, /control character/],
      ['readFile', { path: '/tmp/a\u0000b' }, /control character/],
      ['readFile', { path: '/tmp/\u2028' }, /control character/],
      ['readFile', { path: long }, /at most 255/],
      ['readFile', { path: 42 }],
      ['readFile', { path: ['/tmp/a'] }],
      ['readFile', { path: '/tmp/a', data: 'x' }, /unknown key/],
      ['writeFile', { path: '/tmp/a' }, /data must be text/],
      ['writeFile', { data: 'x' }],
      ['writeFile', { path: '/tmp/a', data: 'bell\u0007' }, /control character/],
      ['writeFile', { path: '/tmp/a', data: 'x'.repeat(FILE_DATA_MAX + 1) }, /at most 4000/],
      ['writeFile', { path: '/tmp/a', data: '\ud800' }, /half of a character/],
      ['writeFile', { path: '/tmp/a', data: Buffer.from('x') }],
      // Within the character bound, but each euro sign is 9 characters in the URL.
      ['writeFile', { path: '/tmp/a', data: '€'.repeat(1000) }, new RegExp(`too long once encoded.*at most ${MAX_TARGET}`)],
      ['writeFile', { path: '/tmp/a', data: ' '.repeat(1500) }, /too long once encoded/],
      ['writeFile', { path: '/etc/../x', data: 'x' }],
    ];
    for (const [name, input, message] of cases) {
      it(`${name} ${JSON.stringify(input).slice(0, 80)}`, async function () {
        await expectRejection(runOperation(client, op(name), input), 'EINPUT', message);
        assert.equal(sim.state.requestCount, 0);
      });
    }
  });
});
