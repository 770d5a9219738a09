import type { Route } from './context';

/** The simulated device's edge records (edgerecord) and network storage (sdstate filelistnas, /ns downloads). */
export class SimulatedRecords {
  readonly route: Route = () => false;
}
