/**
 * Hostile and oversized XML, made to any size: the tests parse them at a size where a quadratic
 * parse would take minutes (test/xml-well-formed.test.ts, test/events-parse.test.ts), and
 * `npm run bench xml` prints what each costs per byte, large against small (bench/xml.ts).
 */
import type { ParseLimits } from '../lib/events/parse';
import { PLATE_JPEG } from '../lib/simulator/images';

/** Event post limits lifted, so that the parse itself meets the whole input. */
export const UNBOUNDED: ParseLimits = { maxNodes: Infinity, maxMarkup: Infinity, maxItems: Infinity };

const PLATE_B64 = PLATE_JPEG.toString('base64');

/** A camera post with `count` plate items after an overview item; no item has `carAttr` or `PlateConfidence`. */
export function cameraPlates(count: number, overview = ''): string {
  const items: string[] = [`<item>${overview}<targetImageData><targetBase64Data type="string"><![CDATA[${PLATE_B64}]]></targetBase64Data></targetImageData></item>`];
  for (let i = 0; i < count; i++) {
    items.push(`<item><plateNumber type="string"><![CDATA[P${i}]]></plateNumber><vehicleListType type="string">whiteList</vehicleListType></item>`);
  }
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<config version="1.7" xmlns="http://www.ipc.com/ver10"><smartType type="openAlramObj">VEHICE</smartType>' +
    `<currentTime type="tint64">1700000000000000</currentTime><listInfo type="list" count="${count + 1}">${items.join('')}</listInfo></config>`
  );
}

/** An event post of `count` image tags that never end: no `>` after the first opener (a truncated or hostile post). */
export function endlessImageTags(count: number): string {
  return `<config><smartType>PEA</smartType>${'<xBase64Data a="1" '.repeat(count)}`;
}

/** Broken or oversized documents for parseXml, `n` repetitions of what makes each one hostile. */
export const HOSTILE_XML: ReadonlyArray<readonly [label: string, make: (n: number) => string]> = [
  ['elements opened and never closed', (n) => '<a>'.repeat(n)],
  ['one tag with n attributes', (n) => `<a ${Array.from({ length: n }, (_, i) => `x${i}="1"`).join(' ')}/>`],
  ['one tag with n attributes, never closed', (n) => `<a ${Array.from({ length: n }, (_, i) => `x${i}="1"`).join(' ')}`],
  ['n empty elements in one root', (n) => `<r>${'<i a="1"/>'.repeat(n)}</r>`],
  ['n indented elements in one root', (n) => `<r>${'\n    <i>1</i>'.repeat(n)}\n</r>`],
  ['n lone ampersands in text', (n) => `<r>${'&'.repeat(n)}</r>`],
  ['n references without their ;', (n) => `<r>${'&amp'.repeat(n)}</r>`],
  ['a name of n characters', (n) => `<${'a'.repeat(n)}/>`],
  ['n comments opened, none closed', (n) => `<r>${'<!--'.repeat(n)}`],
  ['n CDATA sections opened, none closed', (n) => `<r>${'<![CDATA['.repeat(n)}`],
  ['n processing instructions with open quotes', (n) => `<r>${'<?p "'.repeat(n)}`],
  ['n "<" in a row', (n) => `<r>${'<'.repeat(n)}`],
  ['n closing tags of other names', (n) => `<r>${'</x>'.repeat(n)}`],
];
