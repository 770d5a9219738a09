import type { Route } from './context';

/** The simulated device's the server tests (servetest: http, cifs/nfs, smtp, ftp) and their logs. */
export class SimulatedServeTests {
  readonly route: Route = () => false;
}
