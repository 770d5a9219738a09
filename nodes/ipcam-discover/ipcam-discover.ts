import { checkInterface, DISCOVERY_DURATION, parseTargets } from '../../lib/discovery/probe';
import { cleared, found, searching } from '../../lib/status/status';
import { IpcamError } from '../../lib/errors/errors';
import { bool, withDefault } from '../../lib/input/params';
import { reportFailure } from '../action';
import { search } from '../discovery-search';
import type { Node, NodeAPI, NodeDef } from '../red';

interface DiscoverDef extends NodeDef {
  duration?: string | number;
  interface?: string;
  targets?: string;
  identify?: boolean | string;
}

interface DiscoverCredentials {
  username: string;
  password: string;
}

const IDENTIFY = withDefault(bool(), false);

/**
 * Finds devices on the LAN (WS-Discovery) on every input and sends the list. One search at a
 * time: an input while one runs is EINPUT. Closing the node ends its search and its socket.
 */
export = function register(RED: NodeAPI): void {
  function IpcamDiscoverNode(this: Node<DiscoverCredentials>, def: DiscoverDef): void {
    RED.nodes.createNode(this, def);
    let running: AbortController | undefined;
    let closing = false;

    this.on('input', (msg, send, done) => {
      void (async () => {
        if (running) return reportFailure(this, msg, new IpcamError('EINPUT', 'A search is already running: send the next input when it has ended'), done);
        const controller = new AbortController();
        try {
          // The settings are checked on every input: a bad one is EINPUT, nothing is sent.
          const durationS = DISCOVERY_DURATION.parse(def.duration, 'duration');
          const identify = IDENTIFY.parse(def.identify, 'identify');
          const options = { interface: checkInterface(def.interface), targets: parseTargets(def.targets) };
          running = controller;
          this.status(searching(durationS));
          const username = this.credentials?.username ?? '';
          const password = this.credentials?.password ?? '';
          const result = await search(RED, {
            durationMs: durationS * 1000,
            ...options,
            identify,
            credentials: username !== '' && password !== '' ? { username, password } : undefined,
            signal: controller.signal,
          });
          if (closing) return done();
          msg.payload = result.devices;
          if (result.truncated) msg['truncated'] = true;
          this.status(found(result.devices.length, result.truncated === true));
          send(msg);
          done();
        } catch (err) {
          if (closing) return done();
          reportFailure(this, msg, err, done);
        } finally {
          if (running === controller) running = undefined;
        }
      })();
    });

    this.on('close', (_removed, done) => {
      closing = true;
      running?.abort();
      this.status(cleared());
      done();
    });
  }

  RED.nodes.registerType('ipcam-discover', IpcamDiscoverNode as (this: never, def: never) => void, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
};
