import { randomBytes } from 'node:crypto';
import { CERT_COUNTRY, CERT_DAYS, CERT_FIELD_MAX, CERT_FORBID } from '../ops/certificates';
import type { Route, SimContext } from './context';
import { sendText } from './respond';

/** The subject of the simulated certificate (issuer too: it is self-signed). */
export interface SimulatedSubject {
  country: string;
  state: string;
  locality: string;
  organization: string;
  unit: string;
  commonName: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The simulated device's HTTPS certificate (sslselfsign, sslcertinfo), checked with the spec's limits. */
export class SimulatedCertificates {
  subject: SimulatedSubject = { country: 'SE', state: 'Skane', locality: 'Lund', organization: 'ipcam-simulator', unit: 'Cameras', commonName: 'ipcam-sim.local' };
  notBefore = new Date(Date.UTC(2025, 0, 1));
  days = 1000;
  serial = randomBytes(16);
  /** Certificates made by sslselfsign since start. */
  created = 0;
  /** False: no certificate yet, and sslcertinfo answers an error line (set it to test that case). */
  installed = true;
  private readonly modulus = randomBytes(256);

  readonly route: Route = (ctx) => {
    if (ctx.path === '/cgi-bin/admin/sslselfsign') {
      sendText(ctx.res, 200, this.selfSign(ctx));
      return true;
    }
    if (ctx.path === '/cgi-bin/admin/sslcertinfo') {
      sendText(ctx.res, 200, this.installed ? this.dump() : '# Error: No certificate installed\r\n');
      return true;
    }
    return false;
  };

  /** A key left out keeps its current value (spec rule 4: the system-configured one). */
  private selfSign(ctx: SimContext): string {
    const get = (key: string): string | undefined => ctx.query.find(([k]) => k === key)?.[1];
    const next = { ...this.subject };
    const country = get('CNTR');
    if (country !== undefined) {
      if (!CERT_COUNTRY.test(country)) return "# Error: Error setting 'CNTR'\r\n";
      next.country = country;
    }
    const fields: Array<[string, keyof typeof CERT_FIELD_MAX]> = [['STAT', 'state'], ['LOCA', 'locality'], ['ORGA', 'organization'], ['ORUN', 'unit'], ['CMNM', 'commonName']];
    for (const [key, field] of fields) {
      const value = get(key);
      if (value === undefined) continue;
      const fits = value.trim() !== '' && [...value].length <= CERT_FIELD_MAX[field] && !CONTROL.test(value) && ![...CERT_FORBID].some((c) => value.includes(c));
      if (!fits) return `# Error: Error setting '${key}'\r\n`;
      next[field] = value;
    }
    let days = this.days;
    const vali = get('VALI');
    if (vali !== undefined) {
      days = /^\d{1,4}$/.test(vali) ? Number(vali) : NaN;
      if (!(days >= CERT_DAYS.min && days <= CERT_DAYS.max)) return "# Error: Error setting 'VALI'\r\n";
    }
    this.subject = next;
    this.days = days;
    this.notBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
    this.serial = randomBytes(16);
    this.created++;
    this.installed = true;
    return `Self-signed certificate created for ${next.commonName}, valid ${days} days\r\n`;
  }

  get notAfter(): Date {
    return new Date(this.notBefore.getTime() + this.days * DAY_MS);
  }

  /** The certificate as `openssl x509 -text` prints it. */
  private dump(): string {
    const s = this.subject;
    const name = `C = ${s.country}, ST = ${s.state}, L = ${s.locality}, O = ${s.organization}, OU = ${s.unit}, CN = ${s.commonName}`;
    const hex = (bytes: Buffer, indent: string): string[] => {
      const lines: string[] = [];
      for (let i = 0; i < bytes.length; i += 15) lines.push(indent + [...bytes.subarray(i, i + 15)].map((b) => b.toString(16).padStart(2, '0')).join(':') + (i + 15 < bytes.length ? ':' : ''));
      return lines;
    };
    return [
      'Certificate:',
      '    Data:',
      '        Version: 3 (0x2)',
      '        Serial Number:',
      // OpenSSL writes a serial on one line however long, and wraps key and signature bytes at 15.
      `            ${[...this.serial].map((b) => b.toString(16).padStart(2, '0')).join(':')}`,
      '        Signature Algorithm: sha256WithRSAEncryption',
      `        Issuer: ${name}`,
      '        Validity',
      `            Not Before: ${opensslDate(this.notBefore)}`,
      `            Not After : ${opensslDate(this.notAfter)}`,
      `        Subject: ${name}`,
      '        Subject Public Key Info:',
      '            Public Key Algorithm: rsaEncryption',
      '                Public-Key: (2048 bit)',
      '                Modulus:',
      ...hex(Buffer.concat([Buffer.from([0]), this.modulus]), '                    '),
      '                Exponent: 65537 (0x10001)',
      '        X509v3 extensions:',
      '            X509v3 Basic Constraints: critical',
      '                CA:TRUE',
      '    Signature Algorithm: sha256WithRSAEncryption',
      '    Signature Value:',
      ...hex(this.modulus, '        '),
      '',
    ].join('\n');
  }
}

/** `Jan  1 00:00:00 2026 GMT`, as OpenSSL writes a validity date. */
function opensslDate(date: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${MONTHS[date.getUTCMonth()]} ${String(date.getUTCDate()).padStart(2, ' ')} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} ${date.getUTCFullYear()} GMT`;
}
