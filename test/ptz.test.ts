import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { CgiPtzMover, cgiPtz, cgiPtzPath, checkCgiPtz } from '../lib/ops/ptz-cgi';
import { startSimulator, type PtzCommand, type RecordedRequest, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { parseXml } from '../lib/xml/codec';
import { getPtzCaps, ptzControl, speedRange, type PtzAction } from '../lib/ops/ptz-xml';
import { PtzMover, type PtzMove } from '../lib/ops/ptz-mover';
import { addPresetRequest, checkXmlPreset, cruisesRequest, deletePresetRequest, gotoPresetRequest, parsePtzList, presetsRequest, runCruiseRequest, stopCruiseRequest } from '../lib/ops/ptz-presets';
import { IpcamError } from '../lib/errors/errors';
import { SIM_PASSWORD, SIM_USER, waitFor, expectRejection, expectQuiet } from './helpers';

/** Written out from the spec (xml-api 4.6), not imported, so that a change in lib shows. */
const XML_ACTIONS: PtzAction[] = ['Up', 'Down', 'Left', 'Right', 'LeftUp', 'LeftDown', 'RightUp', 'RightDown', 'ZoomIn', 'ZoomOut', 'Near', 'Far', 'IrisOpen', 'IrisClose', 'Stop'];
/** cgi-api 4.5 `move` values (repeat is the continuation flag, not a move of its own). */
const CGI_MOVES = ['home', 'up', 'down', 'left', 'right', 'upleft', 'upright', 'downleft', 'downright', 'stop', 'reset'];
const DIRECTIONS = ['up', 'down', 'left', 'right', 'upleft', 'upright', 'downleft', 'downright'];
const NS = 'http://www.ipc.com/ver10';
/** Every reserved character of cgi-api rule 3 and a space, 23 characters. */
const RESERVED_NAME = 'a;b/c?d:e@f&g=h+i,j$k l';
const RESERVED_ENCODED = 'a%3Bb%2Fc%3Fd%3Ae%40f%26g%3Dh%2Bi%2Cj%24k%20l';

/** The speed of an `actionInfo` request body, with root, version and namespace checked. */
function speedOf(req: RecordedRequest | undefined): number {
  assert.ok(req, 'the request did not reach the simulator');
  const root = parseXml(req.body);
  assert.equal(root.name, 'actionInfo');
  assert.equal(root.attrs['version'], '1.0');
  assert.equal(root.attrs['xmlns'], NS);
  assert.deepEqual(
    root.children.map((c) => c.name),
    ['speed'],
  );
  const [speed] = root.children;
  assert.equal(speed?.attrs['type'], 'uint32');
  assert.match(speed?.text ?? '', /^\d+$/);
  return Number(speed?.text);
}

describe('PTZ (lib) against the simulator', function () {
  let sim: Simulator;
  let client: DeviceClient;
  const others: DeviceClient[] = [];

  function newClient(): DeviceClient {
    return new DeviceClient({ host: '127.0.0.1', port: sim.port, auth: 'basic', username: SIM_USER, password: SIM_PASSWORD, timeout: 5000 });
  }

  beforeEach(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD, auth: 'basic' });
    client = newClient();
  });

  afterEach(async function () {
    await Promise.all([client, ...others.splice(0)].map((c) => c.close()));
    await sim.close();
  });

  /** The requests the simulator accepted, optionally only those to one path. */
  function requests(path?: string): RecordedRequest[] {
    return sim.state.requests.filter((r) => r.auth !== 'rejected' && (path === undefined || r.path === path));
  }

  function paths(): string[] {
    return requests().map((r) => r.path);
  }

  function log(): Array<Pick<PtzCommand, 'api' | 'channel' | 'action' | 'speed'>> {
    return sim.state.ptz.log.map(({ api, channel, action, speed }) => ({ api, channel, action, ...(speed !== undefined && { speed }) }));
  }

  function stops(channel?: number): PtzCommand[] {
    return sim.state.ptz.log.filter((c) => c.action === 'Stop' && (channel === undefined || c.channel === channel));
  }

  describe('XML PtzControl: the request of every action', function () {
    for (const channel of [1, 3]) {
      for (const action of XML_ACTIONS) {
        it(`${action} on channel ${channel}: POST /PtzControl/${channel}/${action} with actionInfo speed`, async function () {
          await ptzControl(client, action, 5, channel);
          const [req, ...more] = requests();
          assert.equal(more.length, 0, `more than one request: ${paths().join(', ')}`);
          assert.ok(req);
          assert.equal(req.method, 'POST');
          assert.equal(req.path, `/PtzControl/${channel}/${action}`);
          assert.equal(req.rawQuery, '');
          assert.match(String(req.headers['content-type']), /^application\/xml/);
          assert.equal(speedOf(req), 5);
          assert.deepEqual(log(), [{ api: 'xml', channel, action, speed: 5 }]);
          const state = sim.state.ptz.channel(channel);
          assert.equal(state.moving, action !== 'Stop');
        });
      }
    }

    it('the channel defaults to 1 and stands in the path', async function () {
      await ptzControl(client, 'Left', 2);
      assert.deepEqual(paths(), ['/PtzControl/1/Left']);
      assert.equal(speedOf(requests()[0]), 2);
    });

    it('the mover takes any spelling of an action and sends the spec spelling', async function () {
      const mover = new PtzMover(client);
      assert.deepEqual(await mover.move({ action: 'leftup', speed: 3 }), { action: 'LeftUp', ok: true });
      assert.deepEqual(await mover.move({ action: ' ZOOMIN ', speed: '6', channel: '3' }), { action: 'ZoomIn', ok: true });
      assert.deepEqual(paths(), ['/PtzGetCaps/1', '/PtzControl/1/LeftUp', '/PtzGetCaps/3', '/PtzControl/3/ZoomIn']);
      assert.equal(speedOf(requests('/PtzControl/1/LeftUp')[0]), 3);
      assert.equal(speedOf(requests('/PtzControl/3/ZoomIn')[0]), 6);
      await mover.close();
    });

    it('a device error document is EDEVICE (channel out of range)', async function () {
      const err = await expectRejection(ptzControl(client, 'Up', 4, 9), 'EDEVICE');
      assert.equal(err.deviceCode, 12);
    });
  });

  describe('speed range from PtzGetCaps', function () {
    it('getPtzCaps reads controlMinSpeed / controlMaxSpeed of a channel', async function () {
      sim.state.ptz.speedRange = { min: 2, max: 6 };
      assert.deepEqual(await getPtzCaps(client, 3), { min: 2, max: 6 });
      assert.deepEqual(paths(), ['/PtzGetCaps/3']);
    });

    it('is read once per device and channel', async function () {
      const mover = new PtzMover(client);
      // Concurrent first moves share one read.
      await Promise.all([mover.move({ action: 'Left', speed: 3 }), new PtzMover(client).move({ action: 'Right', speed: 3 })]);
      await mover.move({ action: 'Up', speed: 4 });
      await mover.move({ action: 'Down', speed: 5, channel: 3 });
      await mover.move({ action: 'Stop', channel: 3 });
      await mover.move({ action: 'Stop', channel: 1 });
      assert.equal(requests('/PtzGetCaps/1').length, 1, paths().join(', '));
      assert.equal(requests('/PtzGetCaps/3').length, 1, paths().join(', '));
      assert.equal(requests().filter((r) => r.path.startsWith('/PtzGetCaps')).length, 2);
      assert.equal(requests().filter((r) => r.path.startsWith('/PtzControl/')).length, 6);
      assert.deepEqual(await speedRange(client, 1), { min: 1, max: 8 });
      assert.equal(requests('/PtzGetCaps/1').length, 1);

      // Another device (another client) reads its own.
      const second = newClient();
      others.push(second);
      await new PtzMover(second).move({ action: 'Stop' });
      assert.equal(requests('/PtzGetCaps/1').length, 2);
      await mover.close();
    });

    it('its range narrows the check: speed 7 with caps 2-6 is EINPUT after the caps read, nothing else sent', async function () {
      sim.state.ptz.speedRange = { min: 2, max: 6 };
      const mover = new PtzMover(client);
      await expectRejection(mover.move({ action: 'Left', speed: 7 }), 'EINPUT', /2 to 6/);
      assert.deepEqual(paths(), ['/PtzGetCaps/1']);
      await expectRejection(mover.move({ action: 'Left', speed: 1 }), 'EINPUT', /2 to 6/);
      assert.deepEqual(paths(), ['/PtzGetCaps/1']);
      assert.deepEqual(sim.state.ptz.log, []);

      assert.deepEqual(await mover.move({ action: 'Left', speed: 6 }), { action: 'Left', ok: true });
      assert.deepEqual(await mover.move({ action: 'Right', speed: 2 }), { action: 'Right', ok: true });
      assert.deepEqual(paths(), ['/PtzGetCaps/1', '/PtzControl/1/Left', '/PtzControl/1/Right']);
      assert.deepEqual(log(), [
        { api: 'xml', channel: 1, action: 'Left', speed: 6 },
        { api: 'xml', channel: 1, action: 'Right', speed: 2 },
      ]);
      await mover.close();
    });

    it('a move without a speed takes one inside the caps range', async function () {
      sim.state.ptz.speedRange = { min: 6, max: 8 };
      const mover = new PtzMover(client);
      await mover.move({ action: 'Up' });
      const speed = speedOf(requests('/PtzControl/1/Up')[0]);
      assert.ok(speed >= 6 && speed <= 8, `speed ${speed}`);
      await mover.close();
    });

    it('a device without PtzGetCaps (404) falls back to 1-8, asked once', async function () {
      sim.inject({ kind: 'status', status: 404, path: '/PtzGetCaps' });
      // The device itself only takes 2-6: a speed the fallback allows reaches it and it refuses.
      sim.state.ptz.speedRange = { min: 2, max: 6 };
      const mover = new PtzMover(client);
      await expectRejection(mover.move({ action: 'Left', speed: 9 }), 'EINPUT', /1 to 8/);
      assert.equal(requests().length, 0, 'speed 9 is outside the interface range: nothing is sent');

      const refused = await expectRejection(mover.move({ action: 'Left', speed: 7 }), 'EDEVICE');
      assert.equal(refused.deviceCode, 16);
      assert.deepEqual(paths(), ['/PtzGetCaps/1', '/PtzControl/1/Left']);
      assert.equal(speedOf(requests('/PtzControl/1/Left')[0]), 7);

      sim.state.ptz.speedRange = { min: 1, max: 8 };
      assert.deepEqual(await mover.move({ action: 'Right', speed: 8 }), { action: 'Right', ok: true });
      assert.deepEqual(await mover.move({ action: 'Up', speed: 1 }), { action: 'Up', ok: true });
      await expectRejection(mover.move({ action: 'Up', speed: 9 }), 'EINPUT', /1 to 8/);
      assert.equal(requests('/PtzGetCaps/1').length, 1, paths().join(', '));
      assert.deepEqual(await speedRange(client, 1), { min: 1, max: 8 });
      await mover.close();
    });

    describe('bad input is EINPUT and sends nothing', function () {
      const cases: Array<{ what: string; move: PtzMove; message: RegExp }> = [
        { what: 'unknown action', move: { action: 'Spin', speed: 4 }, message: /unknown ptz action/i },
        { what: 'no action', move: { action: undefined, speed: 4 }, message: /unknown ptz action/i },
        { what: 'speed 0', move: { action: 'Left', speed: 0 }, message: /speed/i },
        { what: 'speed 9', move: { action: 'Left', speed: 9 }, message: /speed/i },
        { what: "speed 'fast'", move: { action: 'Left', speed: 'fast' }, message: /speed/i },
        { what: 'speed 2.5', move: { action: 'Left', speed: 2.5 }, message: /speed/i },
        { what: 'speed -1', move: { action: 'Left', speed: -1 }, message: /speed/i },
        { what: 'channel 0', move: { action: 'Left', speed: 4, channel: 0 }, message: /channel/i },
        { what: "channel 'two'", move: { action: 'Left', speed: 4, channel: 'two' }, message: /channel/i },
        { what: 'duration -1', move: { action: 'Left', speed: 4, duration: -1 }, message: /duration/i },
        { what: "duration '1s'", move: { action: 'Left', speed: 4, duration: '1s' }, message: /duration/i },
      ];
      for (const c of cases) {
        it(c.what, async function () {
          const mover = new PtzMover(client);
          await expectRejection(mover.move(c.move), 'EINPUT', c.message);
          assert.equal(sim.state.requestCount, 0, 'a request was sent');
          await mover.close();
          assert.equal(sim.state.requestCount, 0, 'close sent something');
        });
      }
    });
  });

  describe('timed moves', function () {
    let mover: PtzMover | undefined;
    afterEach(async function () {
      await mover?.close();
      mover = undefined;
    });

    it('a move with a duration is followed by exactly one Stop', async function () {
      mover = new PtzMover(client);
      await mover.move({ action: 'Left', speed: 5, duration: 100 });
      assert.equal(sim.state.ptz.channel(1).moving, true);
      await waitFor('the Stop', () => stops().length > 0);
      assert.deepEqual(log(), [
        { api: 'xml', channel: 1, action: 'Left', speed: 5 },
        { api: 'xml', channel: 1, action: 'Stop', speed: 5 },
      ]);
      assert.equal(sim.state.ptz.channel(1).moving, false);
      const [move, stop] = sim.state.ptz.log;
      assert.ok(move && stop && stop.time - move.time >= 90, 'the Stop came before the duration');
      // Nothing else follows, and close has nothing left to stop.
      expectQuiet(sim, 'sent after the Stop');
      await sleep(300);
      await mover.close();
      assert.equal(stops().length, 1);
      assert.deepEqual(paths(), ['/PtzGetCaps/1', '/PtzControl/1/Left', '/PtzControl/1/Stop']);
    });

    it('a second move before the Stop replaces it: only the second move is stopped', async function () {
      mover = new PtzMover(client);
      await mover.move({ action: 'Left', speed: 5, duration: 100 });
      await mover.move({ action: 'Right', speed: 3, duration: 1500 });
      await waitFor('the Stop', () => stops().length > 0);
      // Had the first Stop not been cancelled, it would have come ~100 ms after Left, long before this one.
      assert.equal(stops().length, 1);
      const right = sim.state.ptz.log.find((c) => c.action === 'Right');
      const [stop] = stops();
      assert.ok(right && stop);
      assert.ok(stop.time - right.time >= 1450, `the Stop came ${stop.time - right.time} ms after the second move`);
      assert.deepEqual(log(), [
        { api: 'xml', channel: 1, action: 'Left', speed: 5 },
        { api: 'xml', channel: 1, action: 'Right', speed: 3 },
        { api: 'xml', channel: 1, action: 'Stop', speed: 3 },
      ]);
    });

    it('a move without a duration cancels the pending Stop; the camera keeps moving until close', async function () {
      mover = new PtzMover(client);
      await mover.move({ action: 'Left', speed: 5, duration: 100 });
      await mover.move({ action: 'ZoomIn', speed: 4, duration: 0 });
      const moving = expectQuiet(sim, 'a Stop before close', (r) => r.path.endsWith('/Stop'));
      await sleep(400);
      assert.equal(stops().length, 0);
      assert.equal(sim.state.ptz.channel(1).moving, true);
      moving.end();
      await mover.close();
      assert.equal(stops().length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
    });

    it('a Stop action cancels the pending Stop (no second Stop)', async function () {
      mover = new PtzMover(client);
      await mover.move({ action: 'Left', speed: 5, duration: 150 });
      await mover.move({ action: 'Stop' });
      expectQuiet(sim, 'a second Stop', (r) => r.path.endsWith('/Stop'));
      await sleep(500);
      assert.equal(stops().length, 1);
      await mover.close();
      assert.equal(stops().length, 1);
    });

    it('a timed move on one channel does not cancel the pending Stop of another', async function () {
      mover = new PtzMover(client);
      await mover.move({ action: 'Left', speed: 5, duration: 100, channel: 1 });
      await mover.move({ action: 'Up', speed: 5, duration: 150, channel: 3 });
      await waitFor('a Stop on both channels', () => stops(1).length > 0 && stops(3).length > 0);
      assert.equal(stops(1).length, 1);
      assert.equal(stops(3).length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
      assert.equal(sim.state.ptz.channel(3).moving, false);
    });

    it('close stops a camera it set moving, on every channel it moved', async function () {
      const m = new PtzMover(client);
      await m.move({ action: 'Left', speed: 5 });
      await m.move({ action: 'ZoomOut', speed: 2, channel: 3, duration: 60_000 });
      await m.close();
      assert.equal(stops(1).length, 1);
      assert.equal(stops(3).length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
      assert.equal(sim.state.ptz.channel(3).moving, false);
      const count = sim.state.requestCount;
      expectQuiet(sim, 'something was sent after close');
      await sleep(200);
      assert.equal(sim.state.requestCount, count, 'something was sent after close');
    });

    it('close while the move is on its way still stops the camera once the move has landed', async function () {
      // The move reaches the camera 150 ms late; the node closes before its answer.
      sim.inject({ kind: 'slow', delay: 150, path: '/PtzControl', times: 1 });
      const m = new PtzMover(client);
      const moving = m.move({ action: 'Left', speed: 5 }).catch((err: unknown) => err);
      // The move itself on its way (not only the caps lookup before it).
      await waitFor('the move sent', () => sim.state.requests.some((r) => r.path.startsWith('/PtzControl')));
      await m.close(newClient());
      // close waits for it: the move lands and is reported as the device answered it, then the Stop.
      assert.deepEqual(await moving, { action: 'Left', ok: true });
      await waitFor('the camera stopped', () => !sim.state.ptz.channel(1).moving && stops(1).length === 1, 2000);
    });

    it('close while the caps lookup before a move is on its way: the move is never sent, nothing is left moving', async function () {
      sim.inject({ kind: 'slow', delay: 150, path: '/PtzGetCaps', times: 1 });
      const m = new PtzMover(client);
      const moving = m.move({ action: 'Left', speed: 5 }).then(
        () => 'sent',
        (err: unknown) => (err instanceof IpcamError ? err.code : 'other'),
      );
      await waitFor('the caps lookup sent', () => sim.state.requests.some((r) => r.path.startsWith('/PtzGetCaps')));
      await m.close(newClient());
      assert.equal(await moving, 'ECONN');
      expectQuiet(sim, 'a move was sent after close', (r) => r.path.startsWith('/PtzControl'));
      await sleep(200);
      assert.equal(sim.state.requests.filter((r) => r.path.startsWith('/PtzControl')).length, 0, 'a move was sent after close');
      assert.equal(sim.state.ptz.channel(1).moving, false);
    });

    it('untilEnded: a timed move answers once its Stop has been answered; a move chained on it comes after the Stop', async function () {
      mover = new PtzMover(client);
      const sent = Date.now();
      assert.deepEqual(await mover.move({ action: 'Left', speed: 5, duration: 300 }, undefined, { untilEnded: true }), { action: 'Left', ok: true });
      const took = Date.now() - sent;
      assert.ok(took >= 300, `answered after ${took} ms, before the move's 300 ms`);
      assert.equal(stops().length, 1, 'answered before its Stop');
      assert.equal(sim.state.ptz.channel(1).moving, false);
      await mover.move({ action: 'Right', speed: 5 });
      assert.deepEqual(paths(), ['/PtzGetCaps/1', '/PtzControl/1/Left', '/PtzControl/1/Stop', '/PtzControl/1/Right']);
    });

    it('untilEnded: another command taking the camera over ends the wait (no Stop of the first move)', async function () {
      mover = new PtzMover(client);
      const first = mover.move({ action: 'Left', speed: 5, duration: 60_000 }, undefined, { untilEnded: true });
      await waitFor('the first move', () => sim.state.ptz.log.length > 0);
      await mover.move({ action: 'Up', speed: 5 });
      assert.deepEqual(await first, { action: 'Left', ok: true });
      assert.equal(stops().length, 0);
    });

    it('untilEnded: a Stop the device refuses is the error of the waiting move (not a warning)', async function () {
      const warnings: unknown[] = [];
      mover = new PtzMover(client, (err) => warnings.push(err));
      sim.inject({ kind: 'status', status: 500, path: '/PtzControl/1/Stop', times: 1 });
      await expectRejection(mover.move({ action: 'Left', speed: 5, duration: 100 }, undefined, { untilEnded: true }), 'EHTTP');
      assert.deepEqual(warnings, []);
      // Without a waiter the same failure is a warning, as before.
      sim.inject({ kind: 'status', status: 500, path: '/PtzControl/1/Stop', times: 1 });
      await mover.move({ action: 'Left', speed: 5, duration: 100 });
      await waitFor('the warning', () => warnings.length === 1);
    });

    it('untilEnded: close during the move stops the camera, completes at once, and ends the wait with ECONN', async function () {
      const m = new PtzMover(client);
      const waiting = m.move({ action: 'Left', speed: 5, duration: 60_000 }, undefined, { untilEnded: true }).then(
        () => 'ended',
        (err: unknown) => (err instanceof IpcamError ? err.code : 'other'),
      );
      await waitFor('the move', () => sim.state.ptz.channel(1).moving);
      const closing = Date.now();
      await m.close();
      assert.ok(Date.now() - closing < 2000, 'close waited for the move');
      assert.equal(await waiting, 'ECONN');
      assert.equal(stops().length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
    });

    it('untilEnded: close while the timed move is on its way ends the wait with ECONN too, once close has stopped the camera', async function () {
      // The move's answer comes 150 ms late: close begins before the mover knows the camera took it.
      sim.inject({ kind: 'slow', delay: 150, path: '/PtzControl/1/Left', times: 1 });
      const m = new PtzMover(client);
      const waiting = m.move({ action: 'Left', speed: 5, duration: 60_000 }, undefined, { untilEnded: true }).then(
        () => 'ended',
        (err: unknown) => (err instanceof IpcamError ? err.code : 'other'),
      );
      await waitFor('the move sent', () => sim.state.requests.some((r) => r.path.startsWith('/PtzControl/1/Left')));
      await m.close();
      assert.equal(await waiting, 'ECONN');
      assert.equal(stops().length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
    });

    it('close sends nothing when the camera was not moving', async function () {
      const idle = new PtzMover(client);
      await idle.close();
      assert.equal(sim.state.requestCount, 0);

      const m = new PtzMover(client);
      await m.move({ action: 'Left', speed: 5, duration: 50 });
      await waitFor('the Stop', () => stops().length > 0);
      await m.move({ action: 'Up', speed: 5 });
      await m.move({ action: 'Stop' });
      const count = sim.state.requestCount;
      await m.close();
      assert.equal(sim.state.requestCount, count, 'close sent a request for a camera already stopped');
      assert.equal(stops().length, 2);
    });
  });

  describe('CGI timed moves (CgiPtzMover): the timing of the XML mover, with move=stop', function () {
    const PTZSET = '/cgi-bin/operator/ptzset';
    let mover: CgiPtzMover | undefined;
    afterEach(async function () {
      await mover?.close();
      mover = undefined;
    });

    /** The CGI log as action[@stream]. */
    function cgiLog(): string[] {
      return sim.state.ptz.log.map((c) => (c.stream === undefined ? c.action : `${c.action}@${c.stream}`));
    }

    function cgiStops(stream?: number): PtzCommand[] {
      return sim.state.ptz.log.filter((c) => c.action === 'stop' && c.stream === stream);
    }

    function queries(): string[] {
      return requests().map((r) => `${r.path === PTZSET ? '' : `${r.path}?`}${r.rawQuery}`);
    }

    it('a direction with a duration is sent continuous and followed by exactly one move=stop', async function () {
      mover = new CgiPtzMover(client);
      const command = await mover.move({ action: 'left', duration: 100 });
      assert.deepEqual(command, { action: 'move', move: 'left', continuous: true });
      assert.equal(sim.state.ptz.channel(1).moving, true);
      await waitFor('the stop', () => cgiStops().length > 0);
      const [move, stop] = sim.state.ptz.log;
      assert.ok(move && stop && stop.time - move.time >= 90, 'the stop came before the duration');
      assert.equal(sim.state.ptz.channel(1).moving, false);
      expectQuiet(sim, 'sent after the stop');
      await sleep(300);
      await mover.close();
      assert.deepEqual(queries(), ['move=left&move=repeat', 'move=stop']);
      assert.deepEqual(cgiLog(), ['left+repeat', 'stop']);
    });

    it('untilEnded: a timed move answers once its move=stop has been answered; the next command comes after it', async function () {
      mover = new CgiPtzMover(client);
      const sent = Date.now();
      await mover.move({ action: 'left', duration: 200 }, undefined, { untilEnded: true });
      assert.ok(Date.now() - sent >= 200, 'answered before the duration');
      assert.equal(cgiStops().length, 1);
      await mover.move({ action: 'right' });
      assert.deepEqual(queries(), ['move=left&move=repeat', 'move=stop', 'move=right']);
    });

    it('a second move before the stop replaces it: only the second move is stopped', async function () {
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'left', duration: 100 });
      await mover.move({ action: 'move', move: 'right', duration: 1500 });
      await waitFor('the stop', () => cgiStops().length > 0);
      assert.equal(cgiStops().length, 1);
      const right = sim.state.ptz.log.find((c) => c.action === 'right+repeat');
      const [stop] = cgiStops();
      assert.ok(right && stop);
      assert.ok(stop.time - right.time >= 1450, `the stop came ${stop.time - right.time} ms after the second move`);
      assert.deepEqual(cgiLog(), ['left+repeat', 'right+repeat', 'stop']);
    });

    it('a continuous move without a duration cancels the pending stop; the camera keeps moving until close', async function () {
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'left', duration: 100 });
      await mover.move({ action: 'up', continuous: true, duration: 0 });
      const moving = expectQuiet(sim, 'a stop before close', (r) => r.path === PTZSET && r.rawQuery.includes('move=stop'));
      await sleep(400);
      assert.equal(cgiStops().length, 0);
      assert.equal(sim.state.ptz.channel(1).moving, true);
      moving.end();
      await mover.close();
      assert.equal(cgiStops().length, 1);
      assert.equal(sim.state.ptz.channel(1).moving, false);
      assert.deepEqual(queries(), ['move=left&move=repeat', 'move=up&move=repeat', 'move=stop']);
    });

    it('a stop cancels the pending stop (no second one)', async function () {
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'downleft', duration: 150 });
      await mover.move('stop');
      expectQuiet(sim, 'sent after the stop');
      await sleep(500);
      await mover.close();
      assert.deepEqual(cgiLog(), ['downleft+repeat', 'stop']);
    });

    it('going to a preset or starting a tour takes over the motion: the pending stop is dropped, close sends nothing', async function () {
      sim.state.ptz.presets.set('#2', 0);
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'left', duration: 150 });
      await mover.move({ action: 'gotoPreset', preset: 2, duration: 150 });
      assert.equal(sim.state.ptz.channel(1).moving, false, 'the preset ended the continuous move');
      await mover.move({ action: 'right', duration: 150 });
      await mover.move({ action: 'startTour', tour: 1 });
      expectQuiet(sim, 'sent after the tour took over');
      await sleep(500);
      await mover.close();
      assert.deepEqual(cgiLog(), ['left+repeat', 'goto #2', 'right+repeat', 'run tour 1']);
    });

    it('storing a preset or stopping a tour during a timed move leaves its stop in place', async function () {
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'left', duration: 200 });
      await mover.move({ action: 'savePreset', preset: 'gate' });
      await mover.move({ action: 'stopTour', tour: 0 });
      await waitFor('the stop', () => cgiStops().length > 0);
      expectQuiet(sim, 'sent after the stop');
      await sleep(300);
      assert.deepEqual(cgiLog(), ['left+repeat', 'save @gate', 'stop tour 0', 'stop']);
    });

    it('a step, home or reset is one command: a duration adds no stop, and close sends nothing', async function () {
      sim.state.ptz.home = 0;
      mover = new CgiPtzMover(client);
      for (const action of ['left', 'home', 'reset']) await mover.move({ action, duration: action === 'left' ? 0 : 100 });
      expectQuiet(sim, 'sent after a step, home or reset (no stop, nothing at close)');
      await sleep(300);
      await mover.close();
      assert.deepEqual(queries(), ['move=left', 'move=home', 'move=reset']);
    });

    it('each stream has its own pending stop, sent with its stream', async function () {
      mover = new CgiPtzMover(client);
      await mover.move({ action: 'left', duration: 100, stream: 1 });
      await mover.move({ action: 'up', duration: 150, stream: 2 });
      await waitFor('a stop on both streams', () => cgiStops(1).length > 0 && cgiStops(2).length > 0);
      expectQuiet(sim, 'sent after the stop of both streams');
      await sleep(200);
      assert.deepEqual(queries(), ['move=left&move=repeat&stream=1', 'move=up&move=repeat&stream=2', 'move=stop&stream=1', 'move=stop&stream=2']);
    });

    it('close stops every stream it left moving, once, and nothing follows', async function () {
      const m = new CgiPtzMover(client);
      await m.move({ action: 'left', continuous: true });
      await m.move({ action: 'right', duration: 60_000, stream: 3 });
      await m.close();
      assert.equal(cgiStops().length, 1);
      assert.equal(cgiStops(3).length, 1);
      const count = sim.state.requestCount;
      expectQuiet(sim, 'something was sent after close');
      await sleep(200);
      assert.equal(sim.state.requestCount, count, 'something was sent after close');
    });

    it('close(via) sends the stop on the client it is given (the shared one may be closing)', async function () {
      const m = new CgiPtzMover(client);
      await m.move({ action: 'left', duration: 60_000 });
      const own = newClient();
      others.push(own);
      assert.equal(m.isMoving, true);
      await client.close();
      await m.close(own);
      assert.equal(m.isMoving, false);
      assert.deepEqual(cgiLog(), ['left+repeat', 'stop']);
    });

    describe('a bad duration is EINPUT and sends nothing', function () {
      for (const duration of [-5, 600_001, 1.5, 'soon', true]) {
        it(`duration ${JSON.stringify(duration)}`, async function () {
          await expectRejection(new CgiPtzMover(client).move({ action: 'left', duration }), 'EINPUT', /duration/i);
          assert.equal(sim.state.requestCount, 0);
        });
      }
    });
  });

  describe('CGI ptzset and ptzconfig', function () {
    /** The one request a command sent: GET, path and raw query exactly. */
    function assertOnly(path: string, rawQuery: string): RecordedRequest {
      const all = requests();
      assert.equal(all.length, 1, `requests: ${all.map((r) => `${r.path}?${r.rawQuery}`).join(', ')}`);
      const [req] = all;
      assert.ok(req);
      assert.equal(req.method, 'GET');
      assert.equal(req.path, path);
      assert.equal(req.rawQuery, rawQuery);
      return req;
    }

    const PTZSET = '/cgi-bin/operator/ptzset';
    const PTZCONFIG = '/cgi-bin/operator/ptzconfig';

    for (const move of CGI_MOVES) {
      it(`move ${move}: move=${move}`, async function () {
        if (move === 'home') sim.state.ptz.home = 0;
        const command = await cgiPtz(client, move);
        assert.deepEqual(command, { action: 'move', move, continuous: false });
        assertOnly(PTZSET, `move=${move}`);
        assert.deepEqual(log(), [{ api: 'cgi', channel: 1, action: move }]);
      });
    }

    for (const move of DIRECTIONS) {
      it(`continuous ${move}: move=${move}&move=repeat, until move=stop`, async function () {
        await cgiPtz(client, { action: move, continuous: true });
        const req = assertOnly(PTZSET, `move=${move}&move=repeat`);
        assert.deepEqual(req.query, [
          ['move', move],
          ['move', 'repeat'],
        ]);
        assert.equal(sim.state.ptz.channel(1).moving, true);
        await cgiPtz(client, { action: 'move', move: 'stop' });
        assert.equal(sim.state.ptz.channel(1).moving, false);
        assert.deepEqual(
          requests().map((r) => r.rawQuery),
          [`move=${move}&move=repeat`, 'move=stop'],
        );
      });
    }

    it('the move action with a move field, any case', async function () {
      await cgiPtz(client, { action: 'move', move: 'UpLeft', continuous: true });
      assertOnly(PTZSET, 'move=upleft&move=repeat');
    });

    it('save, go to and remove a preset by number', async function () {
      await cgiPtz(client, { action: 'savePreset', preset: 5 });
      await cgiPtz(client, { action: 'gotoPreset', preset: '5' });
      await cgiPtz(client, { action: 'removePreset', preset: 5 });
      assert.deepEqual(
        requests().map((r) => [r.method, r.path, r.rawQuery]),
        [
          ['GET', PTZCONFIG, 'setserverpresetno=5'],
          ['GET', PTZSET, 'gotoserverpresetno=5'],
          ['GET', PTZCONFIG, 'removeserverpresetno=5'],
        ],
      );
      assert.deepEqual(
        log().map((c) => c.action),
        ['save #5', 'goto #5', 'remove #5'],
      );
      assert.equal(sim.state.ptz.presets.has('#5'), false);
    });

    it('presets 0 and 31 are the bounds', async function () {
      await cgiPtz(client, { action: 'savePreset', preset: 0 });
      await cgiPtz(client, { action: 'savePreset', preset: 31 });
      assert.deepEqual(
        requests().map((r) => r.rawQuery),
        ['setserverpresetno=0', 'setserverpresetno=31'],
      );
    });

    it('save, go to and remove a preset by name, spaces and reserved characters encoded', async function () {
      await cgiPtz(client, { action: 'savePreset', preset: 'Front door' });
      await cgiPtz(client, { action: 'gotoPreset', preset: 'Front door' });
      await cgiPtz(client, { action: 'savePreset', preset: RESERVED_NAME });
      await cgiPtz(client, { action: 'gotoPreset', preset: RESERVED_NAME });
      await cgiPtz(client, { action: 'removePreset', preset: RESERVED_NAME });
      assert.deepEqual(
        requests().map((r) => [r.method, r.path, r.rawQuery]),
        [
          ['GET', PTZCONFIG, 'setserverpresetname=Front%20door'],
          ['GET', PTZSET, 'gotoserverpresetname=Front%20door'],
          ['GET', PTZCONFIG, `setserverpresetname=${RESERVED_ENCODED}`],
          ['GET', PTZSET, `gotoserverpresetname=${RESERVED_ENCODED}`],
          ['GET', PTZCONFIG, `removeserverpresetname=${RESERVED_ENCODED}`],
        ],
      );
      assert.deepEqual(
        requests().map((r) => r.query),
        [
          [['setserverpresetname', 'Front door']],
          [['gotoserverpresetname', 'Front door']],
          [['setserverpresetname', RESERVED_NAME]],
          [['gotoserverpresetname', RESERVED_NAME]],
          [['removeserverpresetname', RESERVED_NAME]],
        ],
      );
      assert.deepEqual([...sim.state.ptz.presets.keys()], ['@Front door']);
    });

    it('a name of 31 characters is accepted', async function () {
      const name = 'N'.repeat(31);
      await cgiPtz(client, { action: 'savePreset', preset: name });
      assertOnly(PTZCONFIG, `setserverpresetname=${name}`);
    });

    it('home=yes with a set parameter makes the position home; move=home goes there', async function () {
      sim.state.ptz.position = 42;
      await cgiPtz(client, { action: 'savePreset', preset: 2, home: true });
      await cgiPtz(client, { action: 'savePreset', preset: 'Gate', home: true });
      await cgiPtz(client, 'home');
      assert.deepEqual(
        requests().map((r) => [r.path, r.rawQuery]),
        [
          [PTZCONFIG, 'setserverpresetno=2&home=yes'],
          [PTZCONFIG, 'setserverpresetname=Gate&home=yes'],
          [PTZSET, 'move=home'],
        ],
      );
      assert.equal(sim.state.ptz.home, 42);
    });

    it('remove all presets: the bare key removeallpreset', async function () {
      sim.state.ptz.presets.set('#1', 0);
      await cgiPtz(client, { action: 'removeAllPresets' });
      const req = assertOnly(PTZCONFIG, 'removeallpreset');
      assert.deepEqual(req.query, [['removeallpreset', '']]);
      assert.equal(sim.state.ptz.presets.size, 0);
    });

    it('start and stop a tour', async function () {
      await cgiPtz(client, { action: 'startTour', tour: 2 });
      assert.deepEqual([...sim.state.ptz.tours], [2]);
      await cgiPtz(client, { action: 'stopTour', tour: '2' });
      await cgiPtz(client, { action: 'startTour', tour: 0 });
      await cgiPtz(client, { action: 'startTour', tour: 3 });
      assert.deepEqual(
        requests().map((r) => [r.path, r.rawQuery]),
        [
          [PTZSET, 'runservertourno=2'],
          [PTZSET, 'stopservertourno=2'],
          [PTZSET, 'runservertourno=0'],
          [PTZSET, 'runservertourno=3'],
        ],
      );
      assert.deepEqual([...sim.state.ptz.tours].sort(), [0, 3]);
    });

    it('stream (electronic PTZ view area) goes with the command', async function () {
      sim.state.ptz.presets.set('#4', 0);
      await cgiPtz(client, { action: 'left', stream: 2 });
      await cgiPtz(client, { action: 'right', continuous: true, stream: '1' });
      await cgiPtz(client, { action: 'gotoPreset', preset: 4, stream: 0 });
      await cgiPtz(client, { action: 'savePreset', preset: 'A b', stream: 3 });
      assert.deepEqual(
        requests().map((r) => [r.path, r.rawQuery]),
        [
          [PTZSET, 'move=left&stream=2'],
          [PTZSET, 'move=right&move=repeat&stream=1'],
          [PTZSET, 'gotoserverpresetno=4&stream=0'],
          [PTZCONFIG, 'setserverpresetname=A%20b&stream=3'],
        ],
      );
    });

    it('the request target of a command is the same without a client', function () {
      assert.equal(cgiPtzPath(checkCgiPtz({ action: 'gotoPreset', preset: 'x y' })), '/cgi-bin/operator/ptzset?gotoserverpresetname=x%20y');
      assert.equal(cgiPtzPath(checkCgiPtz({ action: 'removeAllPresets' })), '/cgi-bin/operator/ptzconfig?removeallpreset');
    });

    it('a device refusal is an error (go to a preset that does not exist): 200 with # Error: is EDEVICE with its words', async function () {
      const err = await expectRejection(cgiPtz(client, { action: 'gotoPreset', preset: 9 }), 'EDEVICE', /error going to preset 9/i);
      assert.equal(err.deviceDesc, 'Error going to preset 9');
    });

    describe('bad input is EINPUT and sends nothing', function () {
      const cases: Array<{ what: string; input: unknown; message: RegExp }> = [
        { what: 'unknown action', input: 'spin', message: /unknown ptz action/i },
        { what: 'unknown move', input: { action: 'move', move: 'sideways' }, message: /unknown move/i },
        { what: 'preset 32', input: { action: 'gotoPreset', preset: 32 }, message: /0 to 31/ },
        { what: "preset '32'", input: { action: 'savePreset', preset: '32' }, message: /0 to 31/ },
        { what: 'preset -1', input: { action: 'gotoPreset', preset: -1 }, message: /0 to 31/ },
        { what: 'preset 1.5', input: { action: 'removePreset', preset: 1.5 }, message: /0 to 31/ },
        { what: 'no preset', input: { action: 'gotoPreset' }, message: /preset/i },
        { what: 'preset name with ~', input: { action: 'savePreset', preset: 'a~b' }, message: /~/ },
        { what: 'preset name of 32 characters', input: { action: 'gotoPreset', preset: 'N'.repeat(32) }, message: /31 characters/ },
        { what: 'tour 4', input: { action: 'startTour', tour: 4 }, message: /0 to 3\b/ },
        { what: 'tour -1', input: { action: 'stopTour', tour: -1 }, message: /0 to 3\b/ },
        { what: 'no tour', input: { action: 'startTour' }, message: /0 to 3\b/ },
        { what: 'stream -1', input: { action: 'left', stream: -1 }, message: /stream/i },
      ];
      for (const c of cases) {
        it(c.what, async function () {
          await expectRejection(cgiPtz(client, c.input), 'EINPUT', c.message);
          assert.equal(sim.state.requestCount, 0, 'a request was sent');
        });
      }
    });
  });
});

describe('XML PTZ presets and cruises (lib): requests and lists', function () {
  const DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

  it('each request as the field notes write it, the channel in the path', function () {
    // Going to a preset, stopping a cruise and the lists are safe to send twice (the keep-alive race); the rest are not.
    assert.deepEqual(gotoPresetRequest(2, 5), { path: '/PtzGotoPreset/2', xml: `${DECL}<presetInfo version="1.0" xmlns="${NS}"><id>5</id></presetInfo>`, repeatable: true });
    assert.deepEqual(deletePresetRequest(1, 360), { path: '/PtzDeletePreset/1', xml: `${DECL}<presetInfo version="1.0" xmlns="${NS}"><id>360</id></presetInfo>` });
    assert.deepEqual(addPresetRequest(1, 'gate'), { path: '/PtzAddPreset/1', xml: `${DECL}<presetInfo version="1.0" xmlns="${NS}"><name type="string"><![CDATA[gate]]></name></presetInfo>` });
    assert.deepEqual(runCruiseRequest(3, 1), { path: '/PtzRunCruise/3', xml: `${DECL}<cruiseInfo version="1.0" xmlns="${NS}"><id>1</id></cruiseInfo>` });
    assert.deepEqual(stopCruiseRequest(1), { path: '/PtzStopCruise/1', repeatable: true });
    assert.deepEqual(presetsRequest(4), { path: '/PtzGetPresets/4', repeatable: true });
    assert.deepEqual(cruisesRequest(1), { path: '/PtzGetCruises/1', repeatable: true });
  });

  it('out-of-range ids, long names and bad channels are EINPUT', function () {
    const einput = (run: () => unknown): void => assert.throws(run, (err: unknown) => err instanceof IpcamError && err.code === 'EINPUT');
    einput(() => gotoPresetRequest(1, 0));
    einput(() => gotoPresetRequest(1, 361));
    einput(() => gotoPresetRequest(0, 1));
    einput(() => addPresetRequest(1, 'abcdefghijk'));
    einput(() => addPresetRequest(1, 'a\u0000'));
    einput(() => runCruiseRequest(1, 256));
    einput(() => checkXmlPreset(1.5));
    einput(() => checkXmlPreset({}));
    assert.equal(checkXmlPreset(' 7 '), 7);
    assert.equal(checkXmlPreset('gate'), 'gate');
  });

  it('lists: id as an attribute (CDATA names), or id and name elements; items without an id skipped', function () {
    const notes = parseXml(
      `<config version="1.0" xmlns="${NS}"><presetInfo type="list" maxCount="360"><itemType type="string" maxLen="10"/>` +
        '<item id="1"><![CDATA[gate]]></item><item id="12">\n  <![CDATA[ door ]]>\n</item><item><![CDATA[lost]]></item></presetInfo></config>',
    );
    assert.deepEqual(parsePtzList(notes, 'presetInfo'), [
      { id: 1, name: 'gate' },
      { id: 12, name: ' door ' },
    ]);
    const elements = parseXml(`<cruiseInfo type="list"><item><id>2</id><name><![CDATA[Patrol]]></name></item></cruiseInfo>`);
    assert.deepEqual(parsePtzList(elements, 'cruiseInfo'), [{ id: 2, name: 'Patrol' }]);
    assert.throws(() => parsePtzList(notes, 'cruiseInfo'), (err: unknown) => err instanceof IpcamError && err.code === 'EPARSE');
  });
});
