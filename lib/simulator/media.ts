import type { Route } from './context';

/** The simulated device's audio input (POST /audio_in) and the RTSP port answering DESCRIBE. */
export class SimulatedMedia {
  readonly route: Route = () => false;
}
