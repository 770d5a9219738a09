import type { Route } from './context';

/** The simulated device's HTTPS certificate (sslselfsign, sslcertinfo). */
export class SimulatedCertificates {
  readonly route: Route = () => false;
}
