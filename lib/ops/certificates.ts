/** Spec 4.10: the device's HTTPS certificate (sslselfsign, sslcertinfo). */
import { IpcamError } from '../errors/errors';
import { int, shape, text, withLabels, type Param } from '../input/params';
import { defineOp, type Operation } from './types';

const SELF_SIGN = '/cgi-bin/admin/sslselfsign';
const CERT_INFO = '/cgi-bin/admin/sslcertinfo';

/** Spec 8: `VALI` (days of validity) 1-1000. */
export const CERT_DAYS = { min: 1, max: 1000 } as const;
/** Spec 4.10: `CNTR` is a 2-letter ISO-3166 country code, written in capitals as certificates carry it. */
export const CERT_COUNTRY = /^[A-Z]{2}$/;
/** Longest subject fields: the upper bounds of RFC 5280 (ub-state-name, ub-organization-name, ...). */
export const CERT_FIELD_MAX = { state: 128, locality: 128, organization: 64, unit: 64, commonName: 64 } as const;
/**
 * Characters refused in subject fields: `/`, `=` and `+` split an OpenSSL subject into other
 * fields, and the rest are shell syntax (field notes: these devices had command injections).
 */
export const CERT_FORBID = '/\\=+"\'`$;|&<>';
/** Largest answer read from either CGI (a text dump of one certificate is some 4 KB). */
export const CERT_ANSWER_MAX_BYTES = 64 * 1024;

const subjectField = (max: number): Param<string> => text({ max, forbid: CERT_FORBID });

export const selfSignCertificate = defineOp({
  name: 'selfSignCertificate',
  label: 'New self-signed certificate',
  api: 'cgi',
  access: 'admin',
  class: 'destructive',
  summary: 'Replaces the HTTPS certificate with a new self-signed one',
  params: withLabels(shape({
    country: text({ max: 2, pattern: CERT_COUNTRY, patternText: 'two capital letters (ISO 3166), like SE' }),
    state: subjectField(CERT_FIELD_MAX.state),
    locality: subjectField(CERT_FIELD_MAX.locality),
    organization: subjectField(CERT_FIELD_MAX.organization),
    unit: subjectField(CERT_FIELD_MAX.unit),
    commonName: subjectField(CERT_FIELD_MAX.commonName),
    days: int(CERT_DAYS),
  }), { country: 'Country', state: 'State', locality: 'City', organization: 'Organization', unit: 'Unit', commonName: 'Common name', days: 'Valid (days)' }),
  request: (p) => ({
    path: SELF_SIGN,
    query: [['CNTR', p.country], ['STAT', p.state], ['LOCA', p.locality], ['ORGA', p.organization], ['ORUN', p.unit], ['CMNM', p.commonName], ['VALI', p.days]],
    maxBytes: CERT_ANSWER_MAX_BYTES,
    what: 'self-signed certificate',
  }),
  parse: (answer) => ({ payload: { ok: true as const, text: answer.text.trim() } }),
});

/** What a certificate dump tells (OpenSSL `x509 -text` style); a field is present when the dump has it. */
export interface CertificateInfo {
  subject?: string;
  issuer?: string;
  /** As the device writes it: `4b:1e:...` or `4660 (0x1234)`. */
  serial?: string;
  /** `Not Before`, as the device writes it (e.g. `Jan  1 00:00:00 2026 GMT`). */
  validFrom?: string;
  /** `Not After`, as the device writes it. */
  validTo?: string;
  version?: number;
  signatureAlgorithm?: string;
  publicKeyAlgorithm?: string;
  keyBits?: number;
  /** Subject and issuer are the same: a self-signed certificate. */
  selfSigned?: boolean;
  /** The whole dump. */
  text: string;
}

/** Lines read from a dump and characters kept of a value: a hostile answer costs no more than this. */
export const CERT_DUMP_MAX_LINES = 400;
const VALUE_MAX = 512;
/** `Label: value` (the label is words; `Not After :` has a space before its colon). */
const LABELLED = /^([A-Za-z][A-Za-z -]{0,40}?)\s*:\s*(.*)$/;
/** The bytes of a serial number written on the line after its label. */
const HEX_BYTES = /^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})*:?$/;

/** The bytes of a serial written below its label, on one line or wrapped over a few ending in `:`. */
function serialBelow(lines: readonly string[], from: number): string | undefined {
  let serial = '';
  for (let i = from; i < Math.min(lines.length, from + 4); i++) {
    const line = (lines[i] ?? '').slice(0, VALUE_MAX + 64).trim();
    if (!HEX_BYTES.test(line)) break;
    serial += line;
    if (!line.endsWith(':')) break;
  }
  return serial === '' ? undefined : serial.slice(0, VALUE_MAX);
}

/** Reads a certificate dump (OpenSSL `x509 -text` style); EPARSE when it names none of the fields. */
export function parseCertificateDump(dump: string): CertificateInfo {
  const info: CertificateInfo = { text: dump.trim() };
  const lines = dump.split('\n', CERT_DUMP_MAX_LINES);
  for (let i = 0; i < lines.length; i++) {
    const match = LABELLED.exec((lines[i] ?? '').slice(0, VALUE_MAX + 64).trim());
    if (!match) continue;
    const label = (match[1] as string).toLowerCase().replace(/\s+/g, ' ');
    const value = (match[2] as string).trim().slice(0, VALUE_MAX);
    switch (label) {
      case 'version': {
        const n = /^(\d{1,2})\b/.exec(value)?.[1];
        if (n !== undefined && info.version === undefined) info.version = Number(n);
        break;
      }
      case 'serial number': {
        const serial = value !== '' ? value : serialBelow(lines, i + 1);
        if (serial !== undefined) info.serial ??= serial;
        break;
      }
      case 'signature algorithm':
        // The algorithm is written twice (inside the signed data and before the signature): the first counts.
        info.signatureAlgorithm ??= value;
        break;
      case 'issuer':
        info.issuer ??= value;
        break;
      case 'subject':
        info.subject ??= value;
        break;
      case 'not before':
        info.validFrom ??= value;
        break;
      case 'not after':
        info.validTo ??= value;
        break;
      case 'public key algorithm':
        info.publicKeyAlgorithm ??= value;
        break;
      case 'public-key':
      case 'rsa public-key':
      case 'rsa public key':
      case 'ec public-key': {
        const bits = /\((\d{1,6}) bit\)/.exec(value)?.[1];
        if (bits !== undefined) info.keyBits ??= Number(bits);
        break;
      }
    }
  }
  if (info.subject === undefined && info.issuer === undefined && info.serial === undefined && info.validTo === undefined) {
    throw new IpcamError('EPARSE', 'The certificate answer holds no certificate dump (no subject, issuer, serial or validity)');
  }
  if (info.subject !== undefined && info.issuer !== undefined) info.selfSigned = info.subject === info.issuer;
  return info;
}

export const certificateInfo = defineOp({
  name: 'certificateInfo',
  label: 'Certificate information',
  api: 'cgi',
  access: 'admin',
  class: 'read',
  summary: 'Reads the HTTPS certificate: subject, issuer, serial, validity and the whole text dump',
  params: shape({}),
  request: () => ({ path: CERT_INFO, maxBytes: CERT_ANSWER_MAX_BYTES, what: 'certificate read' }),
  parse: (answer) => ({ payload: parseCertificateDump(answer.text) }),
});

export const CERTIFICATES_OPERATIONS: readonly Operation[] = [selfSignCertificate, certificateInfo];
