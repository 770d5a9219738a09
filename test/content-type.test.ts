/**
 * Content is what it claims (issue 18): a snapshot's type comes from its bytes, a download's from
 * an allow list, never from the device's header alone. Against a device that lies, over real
 * sockets: the simulator answering what the test gives after authenticating the request.
 */
import { strict as assert } from 'node:assert';
import { takeSnapshot, type SnapshotSource } from '../lib/ops/snapshot';
import { checkImage, handedOnType, imageSignature } from '../lib/safety/content-type';
import { runOperation } from '../lib/ops';
import { NAS_PATH } from '../lib/ops/edge';
import { startSimulator, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { expectRejection, SIM_PASSWORD, SIM_USER } from './helpers';
import { SNAPSHOT_JPEG } from '../lib/simulator/images';
import { DOWNLOAD_TYPES, HOSTILE_HTML, HOSTILE_SVG, SNAPSHOT_LIES, TINY_PNG } from './hostile-content';
import { edgeOp, requestOp } from './ops-helper';

const SOURCES: Record<SnapshotSource, string> = { jpg: '/jpg/image.jpg', cgi: '/cgi-bin/admin/image', xml: '/GetSnapshot' };
const MAC = '00:18:AE:11:22:33';

describe('content is what it claims', function () {
  describe('checkImage and handedOnType', function () {
    it('a JPEG or PNG by its signature; anything else says what it is not', function () {
      assert.deepEqual(checkImage(SNAPSHOT_JPEG), { type: 'image/jpeg' });
      assert.deepEqual(checkImage(TINY_PNG), { type: 'image/png' });
      assert.deepEqual(checkImage(Buffer.from([0xff, 0xd8, 0xff, 0xd9])), { type: 'image/jpeg' });
      assert.deepEqual(checkImage(Buffer.alloc(0)), { problem: 'an empty body' });
      assert.match((checkImage(HOSTILE_SVG) as { problem: string }).problem, /neither a JPEG nor a PNG/);
      // Data after the end marker is no reason to refuse a picture (firmware pads and appends).
      assert.deepEqual(checkImage(Buffer.concat([SNAPSHOT_JPEG, Buffer.alloc(64)])), { type: 'image/jpeg' });
      assert.equal(imageSignature(Buffer.from([0xff, 0xd8, 0xff])), undefined, 'the signature alone is not a picture');
    });

    it('only types of the allow list are handed on, bare and in lower case', function () {
      for (const [given, expected] of DOWNLOAD_TYPES) assert.equal(handedOnType(given), expected, given);
      assert.equal(handedOnType(undefined), 'application/octet-stream');
      assert.equal(handedOnType(''), 'application/octet-stream');
    });
  });

  describe('against a device that lies (simulator, real sockets)', function () {
    let sim: Simulator;
    let client: DeviceClient;

    before(async function () {
      sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'digest' });
    });

    after(async function () {
      await sim.close();
    });

    beforeEach(function () {
      sim.clearFaults();
      client = new DeviceClient({ host: '127.0.0.1', port: sim.port, username: SIM_USER, password: SIM_PASSWORD });
    });

    afterEach(async function () {
      await client.close();
    });

    for (const source of ['jpg', 'cgi', 'xml'] as const) {
      describe(`takeSnapshot, source ${source}`, function () {
        for (const lie of SNAPSHOT_LIES) {
          it(`${lie.what}: ${lie.expect}`, async function () {
            sim.inject({ kind: 'answer', path: SOURCES[source], ...(lie.contentType !== undefined && { contentType: lie.contentType }), body: lie.body });
            const served = sim.state.requestCount;
            if (lie.expect === 'EPARSE') {
              const err = await expectRejection(takeSnapshot(client, { source }), 'EPARSE', /JPEG or PNG/);
              assert.ok(!err.message.includes('<script'), 'the device text is not echoed');
            } else {
              const snap = await takeSnapshot(client, { source });
              assert.equal(snap.contentType, lie.expect);
              assert.ok(snap.image.equals(lie.body));
            }
            assert.ok(sim.state.requestCount > served, 'the lie was served over the socket');
          });
        }
      });
    }

    describe('download and backup hand on a type from the allow list only', function () {
      for (const [given, expected] of DOWNLOAD_TYPES) {
        it(`device says ${given}: ${expected}`, async function () {
          sim.inject({ kind: 'answer', path: NAS_PATH, contentType: given, body: HOSTILE_SVG });
          const download = await runOperation(client, edgeOp('download'), { path: '2026-03-01/08/1002/snapshot1.jpg', mac: MAC });
          assert.equal(download.contentType, expected);
          assert.ok(Buffer.isBuffer(download.payload) && download.payload.equals(HOSTILE_SVG), 'the bytes are handed on as they came');
          sim.inject({ kind: 'answer', path: '/cgi-bin/admin/backup', contentType: given, body: HOSTILE_SVG });
          const backup = await runOperation(client, requestOp('backup'), {});
          assert.equal(backup.contentType, expected);
        });
      }

      it('no type or application/octet-stream: download guesses from the extension (from the list), backup says tar', async function () {
        for (const [file, expected] of [
          ['snapshot1.jpg', 'image/jpeg'],
          ['clip.mp4', 'video/mp4'],
          ['recoring.xml', 'application/octet-stream'],
          ['page.html', 'application/octet-stream'],
          ['pic.svg', 'application/octet-stream'],
        ] as const) {
          for (const contentType of [undefined, 'application/octet-stream']) {
            sim.clearFaults();
            sim.inject({ kind: 'answer', path: NAS_PATH, ...(contentType !== undefined && { contentType }), body: HOSTILE_HTML });
            const download = await runOperation(client, edgeOp('download'), { path: `2026-03-01/08/1002/${file}`, mac: MAC });
            assert.equal(download.contentType, expected, `${file} with ${contentType ?? 'no type'}`);
          }
        }
        sim.clearFaults();
        sim.inject({ kind: 'answer', path: '/cgi-bin/admin/backup', body: Buffer.from('ustar') });
        assert.equal((await runOperation(client, requestOp('backup'), {})).contentType, 'application/x-tar');
      });
    });
  });
});
