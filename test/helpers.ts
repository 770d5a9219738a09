import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Tests run compiled from dist/test; fixtures and captures stay in the source tree. */
export const PROJECT_ROOT = resolve(__dirname, '..', '..');

export function fixture(name: string): string {
  return readFileSync(resolve(PROJECT_ROOT, 'test', 'fixtures', name), 'utf8');
}

export const SIM_USER = 'admin';
/** A password with characters that would break naive encoding, and easy to grep for in output. */
export const SIM_PASSWORD = 'S3cr3t:pa ss"wörd';
