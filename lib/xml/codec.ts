import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { IpcamError, inputError } from '../errors/errors';
import { echo } from '../errors/echo';
import { notXmlChar } from '../input/params';
import { XML_REFERENCES } from './references';
import { checkElementBudget, checkWellFormed, MAX_DEPTH } from './well-formed';

/** Namespace of every document of the XML interface (field notes: the same on all firmware seen). */
export const XML_NS = 'http://www.ipc.com/ver10';

/** A parsed element: attributes, child elements in document order, and its text (CDATA included). */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** Typed JS of an answer: numbers and booleans per `type`, lists as arrays, objects for blocks. */
export type XmlValue = string | number | boolean | XmlValue[] | { [name: string]: XmlValue };

/** What a request document is built from; see the `xml` helpers below. */
export interface XmlNode {
  name: string;
  attrs?: Record<string, string | number>;
  children?: XmlNode[];
  /** Escaped text content. */
  text?: string;
  /** CDATA content; stays correct when it contains `]]>`. */
  cdata?: string;
}

const TEXT = '#text';
const CDATA = '#cdata';
const ATTRS = ':@';

/** How answers are handed to fast-xml-parser (exported for the bench, which times the parser alone). */
export const XML_PARSER_OPTIONS = Object.freeze({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  cdataPropName: CDATA,
  processEntities: true,
  // Our own decoder: the parser's own builds its entity tables again for every document, a
  // third of its time on a small one.
  entityDecoder: XML_REFERENCES,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
  // Callbacks get the parser's path object, not a path string built for every value.
  jPath: false,
  // checkWellFormed refuses deeper documents first.
  maxNestedTags: MAX_DEPTH + 1,
});

const parser = new XMLParser(XML_PARSER_OPTIONS);
/**
 * The same parser for a text without any `&`: it holds no reference, so the decoder would be
 * called for every text and attribute value (~50 in a plate post) to give each back unchanged.
 */
const parserWithoutReferences = new XMLParser({ ...XML_PARSER_OPTIONS, processEntities: false });

const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  cdataPropName: CDATA,
  suppressEmptyNode: true,
  processEntities: true,
});

type OrderedNode = Record<string, unknown>;

export interface ParseOptions {
  /**
   * Most elements the answer may hold (default `MAX_XML_ELEMENTS`): more only where an answer
   * legitimately holds more, e.g. a page of plates.
   */
  maxElements?: number;
}

/**
 * Parses a device answer to its root element. No DTD, no entities beyond the five of XML. The
 * parser closes unbalanced tags silently (a truncated answer would read as a shorter one):
 * `checkWellFormed` checks that, and the rest it does not, in one pass before it runs, and hands
 * it the text without the indentation between tags. That pass also holds the element budget
 * (`MAX_XML_ELEMENTS`, or `opts.maxElements`): beyond it EPARSE, before the parser builds anything;
 * an answer's bytes are counted before they are even decoded.
 */
export function parseXml(input: string | Buffer, opts: ParseOptions = {}): XmlElement {
  if (typeof input !== 'string') checkElementBudget(input, opts.maxElements);
  const text = checkWellFormed(documentText(input), opts.maxElements);
  let nodes: OrderedNode[];
  try {
    nodes = (text.includes('&') ? parser : parserWithoutReferences).parse(text) as OrderedNode[];
  } catch {
    // Its messages quote the answer.
    throw new IpcamError('EPARSE', 'The answer is not well-formed XML');
  }
  for (const node of nodes) {
    const name = firstKey(node);
    if (name !== undefined && name !== TEXT && name !== CDATA) return toElement(node, name);
  }
  throw new IpcamError('EPARSE', 'The answer holds no XML element');
}

/** The text from its first non-space character, without a byte order mark. */
function documentText(input: string | Buffer): string {
  const text = typeof input === 'string' ? input : input.toString('utf8');
  return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).trimStart();
}

/** The parser writes an element as `{ [name]: content, ':@': attributes }`, text as `{ '#text': ... }`. */
function firstKey(node: OrderedNode): string | undefined {
  for (const key in node) return key;
  return undefined;
}

/**
 * Field notes: CDATA may be wrapped in whitespace and newlines. That wrapping is trimmed; what is
 * inside a CDATA section is the value as sent, kept exactly: text before the first section loses
 * its leading white space, text after the last its trailing white space, everything from the
 * first section to the last is kept. Without CDATA the text is trimmed.
 */
function toElement(node: OrderedNode, name: string): XmlElement {
  // The parser's attribute object is new for each element and ours from here on.
  const attrs = (node[ATTRS] as Record<string, string> | undefined) ?? {};
  const children: XmlElement[] = [];
  let before = '';
  let kept = '';
  let after = '';
  let cdata = false;
  for (const part of node[name] as OrderedNode[]) {
    const key = firstKey(part);
    if (key === TEXT) {
      if (cdata) after += String(part[TEXT]);
      else before += String(part[TEXT]);
    } else if (key === CDATA) {
      let section = '';
      for (const piece of part[CDATA] as OrderedNode[]) section += String(piece[TEXT] ?? '');
      kept = cdata ? kept + after + section : section;
      after = '';
      cdata = true;
    } else if (key !== undefined) {
      children.push(toElement(part, key));
    }
  }
  return { name, attrs, children, text: cdata ? before.trimStart() + kept + after.trimEnd() : before.trim() };
}

/** First child element of that name. */
export function child(el: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!el) return undefined;
  for (const c of el.children) if (c.name === name) return c;
  return undefined;
}

/** Follows a path of child names, e.g. `path(root, 'vehicle', 'dedupMode')`. */
export function path(el: XmlElement | undefined, ...names: string[]): XmlElement | undefined {
  return names.reduce<XmlElement | undefined>((at, name) => child(at, name), el);
}

/** Entries of a list element (`item` children), always an array. */
export function items(list: XmlElement | undefined): XmlElement[] {
  return list ? list.children.filter((c) => c.name === 'item') : [];
}

const INTEGER_TYPE = /^t?u?int(8|16|32|64)?$|^integer$|^long$/i;

/** The element as typed JS: `type` decides numbers and booleans; lists become arrays. */
export function toTyped(el: XmlElement): XmlValue {
  const type = el.attrs['type'] ?? '';
  if (type === 'list') return items(el).map(toTyped);
  if (el.children.length === 0) return typedLeaf(type, el.text);
  const counts = new Map<string, number>();
  for (const c of el.children) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const out: Record<string, XmlValue> = {};
  for (const c of el.children) {
    const value = toTyped(c);
    if ((counts.get(c.name) ?? 0) === 1) out[c.name] = value;
    else ((out[c.name] ??= []) as XmlValue[]).push(value);
  }
  return out;
}

function typedLeaf(type: string, text: string): XmlValue {
  if (type === 'boolean') {
    if (text === 'true') return true;
    if (text === 'false') return false;
    return text;
  }
  if (INTEGER_TYPE.test(type) && /^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : text;
  }
  if (/^(float|double)$/i.test(type) && text !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/**
 * An answer's element turned back into something to send, names and attributes as the device
 * spelled them (read-modify-write); `type="string"` text goes back in CDATA.
 */
export function elementToNode(el: XmlElement): XmlNode {
  const node: XmlNode = { name: el.name };
  if (Object.keys(el.attrs).length > 0) node.attrs = { ...el.attrs };
  if (el.children.length > 0) node.children = el.children.map(elementToNode);
  else if (el.attrs['type'] === 'string') node.cdata = el.text;
  else node.text = el.text;
  return node;
}

/** Builders for request documents. Strings go in CDATA with `type="string"`, as the spec asks. */
export const xml = {
  el(name: string, children: XmlNode[] = [], attrs?: Record<string, string | number>): XmlNode {
    return { name, children, ...(attrs && { attrs }) };
  },
  str(name: string, value: string): XmlNode {
    return { name, attrs: { type: 'string' }, cdata: value };
  },
  uint(name: string, value: number): XmlNode {
    return { name, attrs: { type: 'uint32' }, text: String(unsigned(name, value, 0xffff_ffff)) };
  },
  uint8(name: string, value: number): XmlNode {
    return { name, attrs: { type: 'uint8' }, text: String(unsigned(name, value, 0xff)) };
  },
  bool(name: string, value: boolean): XmlNode {
    return { name, attrs: { type: 'boolean' }, text: value ? 'true' : 'false' };
  },
  /** Element with plain text and an optional type (enumerations, untyped fields). */
  text(name: string, value: string, type?: string): XmlNode {
    return { name, text: value, ...(type !== undefined && { attrs: { type } }) };
  },
  list(name: string, entries: XmlNode[][], maxCount?: number): XmlNode {
    const attrs: Record<string, string | number> = { type: 'list', count: entries.length };
    if (maxCount !== undefined) attrs['maxCount'] = maxCount;
    return { name, attrs, children: entries.map((entry) => ({ name: 'item', children: entry })) };
  },
};

/** The last check of a number before it is written (each operation checks its own range first). */
function unsigned(name: string, value: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) throw inputError(`${name} must be a whole number from 0 to ${max}`);
  return value;
}

/** A whole request: `<?xml?>` and the root with `version` and the namespace. */
export function buildDocument(version: string, children: XmlNode[], rootName = 'config'): string {
  return buildXml({ name: rootName, attrs: { version, xmlns: XML_NS }, children });
}

export function buildXml(root: XmlNode): string {
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + (builder.build([toOrdered(root)]) as string);
}

/**
 * Every text, CDATA and attribute value is checked for XML 1.0 characters as the document is
 * built: the last line behind each operation's own checks, so that no invalid document is ever
 * sent (`EINPUT`, nothing sent).
 */
function toOrdered(node: XmlNode): OrderedNode {
  for (const value of [node.text, node.cdata, ...Object.values(node.attrs ?? {})]) {
    if (typeof value === 'string' && notXmlChar(value) !== undefined) throw inputError(`The text for element ${echo(node.name)} holds a character XML 1.0 cannot carry`);
  }
  const content: OrderedNode[] = [];
  if (node.text !== undefined) content.push({ [TEXT]: node.text });
  if (node.cdata !== undefined) content.push(...cdataSections(node.cdata));
  for (const c of node.children ?? []) content.push(toOrdered(c));
  const out: OrderedNode = { [node.name]: content };
  if (node.attrs) out[ATTRS] = Object.fromEntries(Object.entries(node.attrs).map(([k, v]) => [k, String(v)]));
  return out;
}

/** `]]>` cannot appear inside one CDATA section: split it across two (`]]` | `>`). */
function cdataSections(text: string): OrderedNode[] {
  const pieces = text.split(']]>');
  const sections = pieces.map((piece, i) => (i < pieces.length - 1 ? piece + ']]' : piece)).map((piece, i) => (i > 0 ? '>' + piece : piece));
  return sections.map((piece) => ({ [CDATA]: [{ [TEXT]: piece }] }));
}
