import type { Route } from './context';

/** The simulated device's files, certificates and parameter templates (fileread, filewrite, sslselfsign, sslcertinfo). */
export class SimulatedFiles {
  /** File contents by path (the server tests read and write their logs here too). */
  readonly files = new Map<string, string>();

  read(path: string): string | undefined {
    return this.files.get(path);
  }

  write(path: string, data: string): void {
    this.files.set(path, data);
  }

  readonly route: Route = () => false;
}
