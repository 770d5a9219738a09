/**
 * What the like-for-like floors do with a camera's plate post: plain fast-xml-parser (the
 * package's own dependency, same version; no validation, no limits), then the plate, its list
 * and the event time read from the document. Nothing of lib/ is used, so the floor does the same
 * work as the event server by the shortest road, not by our code.
 */
import { XMLParser } from 'fast-xml-parser';

export interface PlatePick {
  plate: string;
  list: string;
  time: string;
}

// Text stays text: a plate of digits only must not become a number.
const parser = new XMLParser({ parseTagValue: false, ignoreDeclaration: true });

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

/** The plates of a camera (ipc) plate post; none for anything else. */
export function pickPlates(body: Buffer): PlatePick[] {
  const config = field(parser.parse(body) as unknown, 'config');
  const items = field(field(config, 'listInfo'), 'item');
  const time = text(field(config, 'currentTime'));
  const list = Array.isArray(items) ? (items as unknown[]) : items === undefined ? [] : [items];
  return list.map((item) => ({ plate: text(field(item, 'plateNumber')), list: text(field(item, 'vehicleListType')), time }));
}
