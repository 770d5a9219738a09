import type { Route } from './context';

/** The simulated device's backup, restore, firmware upgrade with progress, reboot, language packs, factory defaults. */
export class SimulatedMaintenance {
  readonly route: Route = () => false;
}
