import { checkInterface, parseTargets, type DiscoveryTarget } from '../../lib/discovery/probe';
import { cleared, found, searching } from '../../lib/status/status';
import { IpcamError } from '../../lib/errors/errors';
import { parseSettings, refusedSetting } from '../../lib/settings';
import type { StoredSettings } from '../../lib/node-spec';
import { refuseEveryInput, reportFailure } from '../action';
import { search } from '../discovery-search';
import type { Node, NodeAPI, NodeDef } from '../red';
import { spec } from './spec';

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

/** The settings as a search takes them (the Interface is checked against the machine by each search). */
interface SearchSettings {
  durationS: number;
  identify: boolean;
  targets: DiscoveryTarget[];
}

/**
 * The node's settings, checked on deploy (DESIGN): the rules of its spec first, then what they
 * cannot tell (an address of Targets); the first one out of its rules is the
 * EINPUT every message gets, naming it. Whether this machine has the Interface's address is not
 * a rule of the setting but the machine's state, which can change after the deploy (a flow
 * started at boot before DHCP gave the address): each search checks it.
 */
function searchSettings(def: DiscoverDef & StoredSettings): SearchSettings | IpcamError {
  const parsed = parseSettings(spec.settings, def);
  if (parsed.refused) return parsed.refused;
  let targets: DiscoveryTarget[];
  try {
    targets = parseTargets(def.targets, 'Targets');
  } catch (err) {
    if (!(err instanceof IpcamError)) throw err;
    return refusedSetting('targets', def.targets, err.message, undefined);
  }
  return { durationS: parsed.settings.duration, identify: parsed.settings.identify, targets };
}

/**
 * Finds devices on the LAN (WS-Discovery) on every input and sends the list. One search at a
 * time: an input while one runs is EINPUT. Closing the node ends its search and its socket.
 */
export = function register(RED: NodeAPI): void {
  function IpcamDiscoverNode(this: Node<DiscoverCredentials>, def: DiscoverDef & StoredSettings): void {
    RED.nodes.createNode(this, def);
    const settings = searchSettings(def);
    if (settings instanceof IpcamError) return refuseEveryInput(this, settings);
    const { durationS, identify, targets } = settings;
    let running: AbortController | undefined;
    let closing = false;

    this.on('input', (msg, send, done) => {
      void (async () => {
        if (running) return reportFailure(this, msg, new IpcamError('EINPUT', 'A search is already running: send the next input when it has ended'), done);
        const controller = new AbortController();
        try {
          const options = { interface: checkInterface(def.interface), targets };
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

  RED.nodes.registerType(spec.type, IpcamDiscoverNode as (this: never, def: never) => void, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
};
