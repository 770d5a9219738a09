/** The set-up the operation tests share: one simulator for the suite, a client of it, requests forgotten before each test. */
import { startSimulator, type Simulator } from '../lib/simulator';
import { DeviceClient } from '../lib/transport/client';
import { SIM_PASSWORD, SIM_USER } from './helpers';

export interface SimulatorAndClient {
  sim: Simulator;
  client: DeviceClient;
}

export interface FixtureOptions {
  /**
   * A new client for each test, closed after it (default: one for the suite): for what a client
   * reads once and keeps (the MAC of the edge records), which would hide a request from a later test.
   */
  clientPerTest?: boolean;
}

/**
 * Registers the hooks of the suite it is called in: the simulator starts before its tests and
 * closes after them, with the client; before each test the simulator forgets the requests it has
 * seen. `ready` is given the simulator and the client as soon as they are made (a client per
 * test: before each test), before the suite's own hooks run.
 */
export function useSimulatorAndClient(ready: (made: SimulatorAndClient) => void, opts: FixtureOptions = {}): void {
  let sim: Simulator | undefined;
  let client: DeviceClient | undefined;
  const connect = (to: Simulator): void => {
    client = new DeviceClient({ host: '127.0.0.1', port: to.port, username: SIM_USER, password: SIM_PASSWORD });
    ready({ sim: to, client });
  };

  before(async function () {
    sim = await startSimulator({ port: 0, username: SIM_USER, password: SIM_PASSWORD });
    if (!opts.clientPerTest) connect(sim);
  });

  after(async function () {
    await client?.close();
    await sim?.close();
  });

  beforeEach(function () {
    if (!sim) throw new Error('the simulator did not start');
    if (opts.clientPerTest) connect(sim);
    sim.resetRequests();
  });

  if (opts.clientPerTest) {
    afterEach(async function () {
      await client?.close();
    });
  }
}
