import { MAX_XML_ELEMENTS } from '../safety/budgets';
import { IpcamError } from '../errors/errors';

/**
 * Deepest nesting of elements read. fast-xml-parser refuses a little deeper (its
 * `maxNestedTags`); device documents nest fewer than ten levels.
 */
export const MAX_DEPTH = 100;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const HASH = 0x23;
const SQUOTE = 0x27;
const DASH = 0x2d;
const SLASH = 0x2f;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;
const LBRACKET = 0x5b;
const LT = 0x3c;
const LOWER_X = 0x78;

/** Names in an entity reference the check accepts: as fast-xml-parser's validator did, up to 20 word characters. */
const MAX_REFERENCE_NAME = 20;
/** Attributes of one tag compared pairwise before a set is cheaper. */
const FEW_ATTRIBUTES = 8;

const NAME_START = 1;
const NAME_CHAR = 2;
/** ASCII part of XML 1.0's NameStartChar and NameChar. */
const ASCII_NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f /* _ */ || c === 0x3a; /* : */
  const other = (c >= 0x30 && c <= 0x39) || c === 0x2d /* - */ || c === 0x2e; /* . */
  ASCII_NAME[c] = letter ? NAME_START | NAME_CHAR : other ? NAME_CHAR : 0;
}

function isSpace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === CR;
}

function isNameChar(c: number, first: boolean): boolean {
  if (c < 0x80) return ((ASCII_NAME[c] as number) & (first ? NAME_START : NAME_CHAR)) !== 0;
  return isWideNameChar(c, first);
}

/**
 * XML 1.0's name characters beyond ASCII, in the Basic Multilingual Plane (fast-xml-parser's
 * validator refused the rest too), less U+1680 and U+FEFF: JavaScript counts them as white space,
 * so the parser would end a name there.
 */
function isWideNameChar(c: number, first: boolean): boolean {
  if (c === 0x1680 || c === 0xfeff) return false;
  if (!first && (c === 0xb7 || (c >= 0x300 && c <= 0x36f) || c === 0x203f || c === 0x2040)) return true;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    (c >= 0x200c && c <= 0x200d) ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd)
  );
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isWordChar(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/**
 * Checks, in one pass over the text, what fast-xml-parser does not check while it parses: that
 * every element is closed by a tag of its own name (the parser closes whatever is open, so a
 * truncated answer would read as a shorter one), one root element and nothing but white space,
 * comments and processing instructions around it, attributes written `name="value"` once each,
 * references in text well formed, and no DTD. It also refuses what the parser would read
 * differently from XML (names it would cut, markup it does not know). Throws EPARSE in our own
 * words with a line number: nothing of the answer is quoted.
 *
 * Returns the text for the parser: the same, less the white space between two tags (indentation)
 * when no element mixes text and child elements. No element's text can hold that white space
 * then (an element with children has only white space, which trims to nothing; a leaf with only
 * white space between its tags trims to nothing too), and the parser no longer makes a text node
 * of each indentation, a quarter of its work on an indented post.
 *
 * More than `maxElements` elements (`MAX_XML_ELEMENTS` unless a call allows more) is EPARSE,
 * found at the first element beyond, before anything is built: a document of millions of tiny
 * elements costs the scan of its first few thousand, not a parse that freezes the event loop.
 */
export function checkWellFormed(text: string, maxElements: number = MAX_XML_ELEMENTS): string {
  return new Scanner(text, maxElements).run();
}

/** The EPARSE of a document over its element budget. */
function tooManyElements(maxElements: number): IpcamError {
  return new IpcamError('EPARSE', `The answer holds more than ${maxElements} XML elements (the element budget of one answer): it is not read`);
}

/**
 * The element budget checked on the bytes of an answer, before they are decoded to text: a
 * hostile answer of millions of elements is refused without a 30 MB string being made of it.
 * Counts each `<` that opens a tag (not `</`, `<!`, `<?`), skipping comments, CDATA sections and
 * processing instructions whole, with the native byte search: the count `checkWellFormed` makes,
 * for any document without a `<` inside an attribute value (which XML forbids).
 */
export function checkElementBudget(bytes: Buffer, maxElements: number = MAX_XML_ELEMENTS): void {
  let elements = 0;
  for (let lt = bytes.indexOf(LT); lt >= 0; lt = bytes.indexOf(LT, lt + 1)) {
    const c = bytes[lt + 1];
    if (c === SLASH) continue;
    if (c === BANG || c === QUESTION) {
      const cdata = c === BANG && bytes[lt + 2] === LBRACKET;
      const comment = c === BANG && bytes[lt + 2] === DASH;
      const end = bytes.indexOf(c === QUESTION ? '?>' : cdata ? ']]>' : comment ? '-->' : '>', lt + 2);
      if (end < 0) return;
      lt = end;
      continue;
    }
    if (++elements > maxElements) throw tooManyElements(maxElements);
  }
}

/**
 * `checkElementBudget` over an answer as it arrives, piece by piece: the same count, so that an
 * answer of millions of elements ends at the first piece beyond its budget instead of being read
 * (and held) whole first. A tag opener split across pieces, or a comment, CDATA section or
 * processing instruction that spans them, is carried over (a few bytes at most).
 */
export class ElementBudget {
  private elements = 0;
  /** Bytes of the last piece still to be read with the next one. */
  private carry: Buffer = Buffer.alloc(0);
  /** The end of the comment, CDATA section or instruction being skipped, if one is open. */
  private skipping: string | undefined;

  constructor(private readonly maxElements: number = MAX_XML_ELEMENTS) {}

  readonly push = (piece: Buffer): void => {
    const bytes = this.carry.length === 0 ? piece : Buffer.concat([this.carry, piece]);
    this.carry = Buffer.alloc(0);
    let from = 0;
    if (this.skipping !== undefined) {
      const end = bytes.indexOf(this.skipping);
      if (end < 0) return this.keep(bytes, bytes.length - this.skipping.length + 1);
      from = end + this.skipping.length;
      this.skipping = undefined;
    }
    for (let lt = bytes.indexOf(LT, from); lt >= 0; lt = bytes.indexOf(LT, lt + 1)) {
      // What follows the `<` decides what it opens: read it with the next piece.
      if (lt + 3 > bytes.length) return this.keep(bytes, lt);
      const c = bytes[lt + 1];
      if (c === SLASH) continue;
      if (c === BANG || c === QUESTION) {
        const close = c === QUESTION ? '?>' : bytes[lt + 2] === LBRACKET ? ']]>' : bytes[lt + 2] === DASH ? '-->' : '>';
        const end = bytes.indexOf(close, lt + 2);
        if (end < 0) {
          this.skipping = close;
          return this.keep(bytes, Math.max(lt + 2, bytes.length - close.length + 1));
        }
        lt = end;
        continue;
      }
      if (++this.elements > this.maxElements) throw tooManyElements(this.maxElements);
    }
  };

  /** Carries `bytes` from `from` on (a copy: never a view that keeps the whole piece alive). */
  private keep(bytes: Buffer, from: number): void {
    this.carry = Buffer.from(bytes.subarray(Math.max(0, from)));
  }
}

/**
 * Per open element: where its name starts and how long it is (no strings are cut out), whether
 * it has a child element and whether it has text or CDATA. One scan runs at a time (it never
 * waits), so these are shared.
 */
const OPEN_START = new Int32Array(MAX_DEPTH);
const OPEN_LENGTH = new Int32Array(MAX_DEPTH);
const HAS_CHILD = new Uint8Array(MAX_DEPTH);
const HAS_DATA = new Uint8Array(MAX_DEPTH);
/** The same for the attribute names of the tag being read, while they are few. */
const ATTR_START = new Int32Array(FEW_ATTRIBUTES);
const ATTR_LENGTH = new Int32Array(FEW_ATTRIBUTES);

class Scanner {
  private readonly text: string;
  private readonly maxElements: number;
  private elements = 0;
  private depth = 0;
  private rootSeen = false;
  private rootClosed = false;
  /** Where the next `&` is at or after the last search (Infinity: none left); -1 before the first search. */
  private nextAmp = -1;
  /** Where the last start, end or empty-element tag ended (-1: none yet), and whether text or CDATA came since. */
  private tagEnd = -1;
  private dataSinceTag = false;
  /** An element holds both child elements and text or CDATA: nothing is left out then. */
  private mixed = false;
  /** Start and end of each stretch of white space between two tags, to leave out. */
  private readonly blanks: number[] = [];

  constructor(text: string, maxElements: number) {
    this.text = text;
    this.maxElements = maxElements;
  }

  run(): string {
    const { text } = this;
    const end = text.length;
    let at = 0;
    while (at < end) {
      const lt = text.indexOf('<', at);
      const textEnd = lt < 0 ? end : lt;
      if (textEnd > at) this.characters(at, textEnd);
      if (lt < 0) break;
      at = this.markup(lt);
    }
    if (!this.rootSeen) throw new IpcamError('EPARSE', 'The answer holds no XML element');
    if (this.depth > 0) this.cutShort();
    return this.withoutBlanks();
  }

  private withoutBlanks(): string {
    const { blanks, text } = this;
    if (this.mixed || blanks.length === 0) return text;
    let out = text.slice(0, blanks[0]);
    for (let i = 1; i < blanks.length - 1; i += 2) out += text.slice(blanks[i], blanks[i + 1]);
    return out + text.slice(blanks[blanks.length - 1]);
  }

  /** Text between markup: white space only outside the root; inside it, references must be complete. */
  private characters(from: number, to: number): void {
    const { text } = this;
    let i = from;
    while (i < to && isSpace(text.charCodeAt(i))) i++;
    if (i === to) return;
    if (this.depth === 0) this.fail('it holds text outside the root element', i);
    this.data();
    for (let amp = this.ampFrom(i); amp < to; amp = this.ampFrom(amp + 1)) this.reference(amp, to);
  }

  /** Text or CDATA in the innermost open element. */
  private data(): void {
    this.dataSinceTag = true;
    const index = this.depth - 1;
    HAS_DATA[index] = 1;
    if (HAS_CHILD[index] === 1) this.mixed = true;
  }

  /**
   * A start, end or empty-element tag from `lt` to `end`. What came since the last such tag is
   * left out if it was only white space, comments and processing instructions.
   */
  private elementTag(lt: number, end: number): void {
    if (this.tagEnd >= 0 && !this.dataSinceTag && lt > this.tagEnd) this.blanks.push(this.tagEnd, lt);
    this.tagEnd = end;
    this.dataSinceTag = false;
  }

  /** The next `&` at or after `from`; each part of the text is searched once however often this is asked. */
  private ampFrom(from: number): number {
    if (this.nextAmp < from) {
      const at = this.text.indexOf('&', from);
      this.nextAmp = at < 0 ? Infinity : at;
    }
    return this.nextAmp;
  }

  /** `&name;` (up to 20 word characters), `&#digits;` or `&#xhex;`, ending before `to`. */
  private reference(amp: number, to: number): void {
    const { text } = this;
    let p = amp + 1;
    if (text.charCodeAt(p) === HASH) {
      p++;
      const hex = text.charCodeAt(p) === LOWER_X;
      if (hex) p++;
      const digits = p;
      while (p < to && (hex ? isHexDigit(text.charCodeAt(p)) : isDigit(text.charCodeAt(p)))) p++;
      if (p === digits) this.fail('it holds a character reference without digits', amp);
    } else {
      const name = p;
      while (p < to && p - name < MAX_REFERENCE_NAME && isWordChar(text.charCodeAt(p))) p++;
      if (p === name) this.fail('it holds an "&" that starts no reference', amp);
    }
    if (p >= this.text.length) this.cutShort();
    if (p >= to || text.charCodeAt(p) !== SEMICOLON) this.fail('it holds a reference without its ";"', amp);
  }

  /** Markup at `lt` (a `<`); returns where the text after it starts. */
  private markup(lt: number): number {
    const c = this.text.charCodeAt(lt + 1);
    if (c === SLASH) return this.closingTag(lt);
    if (c === QUESTION) return this.instruction(lt);
    if (c === BANG) return this.declaration(lt);
    return this.openingTag(lt);
  }

  private openingTag(lt: number): number {
    const { text } = this;
    const start = lt + 1;
    let p = this.nameEnd(start);
    if (p === start) this.failOrCut('it holds a "<" that starts no element', start);
    if (this.rootClosed) this.fail('it holds a second root element', lt);
    if (this.depth >= MAX_DEPTH) this.fail(`it nests elements more than ${MAX_DEPTH} deep`, lt);
    if (++this.elements > this.maxElements) throw tooManyElements(this.maxElements);
    const nameLength = p - start;
    let attributes = 0;
    let many: Set<string> | undefined;
    for (;;) {
      const spaceStart = p;
      while (isSpace(text.charCodeAt(p))) p++;
      const c = text.charCodeAt(p);
      if (c === GT) {
        this.child(lt, p + 1);
        OPEN_START[this.depth] = start;
        OPEN_LENGTH[this.depth] = nameLength;
        HAS_CHILD[this.depth] = 0;
        HAS_DATA[this.depth] = 0;
        this.depth++;
        return p + 1;
      }
      if (c === SLASH) {
        if (text.charCodeAt(p + 1) !== GT) this.failOrCut('it holds a "/" inside a tag', p);
        this.child(lt, p + 2);
        if (this.depth === 0) this.rootClosed = true;
        return p + 2;
      }
      if (p >= text.length) this.cutShort();
      if (p === spaceStart) this.fail('it holds a tag whose name or attributes are not separated by white space', p);
      const attrStart = p;
      p = this.nameEnd(p);
      if (p === attrStart) this.fail('it holds a tag with something other than attributes', p);
      many = this.remember(attributes++, attrStart, p - attrStart, many);
      while (isSpace(text.charCodeAt(p))) p++;
      if (text.charCodeAt(p) !== EQUALS) this.failOrCut('it holds an attribute without a value', p);
      p++;
      while (isSpace(text.charCodeAt(p))) p++;
      const quote = text.charCodeAt(p);
      if (quote !== DQUOTE && quote !== SQUOTE) this.failOrCut('it holds an attribute value without quotes', p);
      const close = text.indexOf(quote === DQUOTE ? '"' : "'", p + 1);
      if (close < 0) this.fail('it holds an attribute value that is not closed', p);
      p = close + 1;
    }
  }

  /** An element starting at `lt` whose start tag ends at `end`, in the innermost open element or as the root. */
  private child(lt: number, end: number): void {
    this.rootSeen = true;
    this.elementTag(lt, end);
    if (this.depth === 0) return;
    const index = this.depth - 1;
    HAS_CHILD[index] = 1;
    if (HAS_DATA[index] === 1) this.mixed = true;
  }

  /**
   * Notes the `index`th attribute name of the tag, refusing a repeated one: compared in place
   * while there are few, in a set of names beyond that (linear however many a tag holds).
   */
  private remember(index: number, start: number, length: number, many: Set<string> | undefined): Set<string> | undefined {
    const { text } = this;
    if (index < FEW_ATTRIBUTES) {
      for (let i = 0; i < index; i++) {
        if (ATTR_LENGTH[i] === length && this.sameText(ATTR_START[i] as number, start, length)) this.fail('it holds a tag with the same attribute twice', start);
      }
      ATTR_START[index] = start;
      ATTR_LENGTH[index] = length;
      return undefined;
    }
    const names = many ?? new Set(Array.from(ATTR_START, (at, i) => text.slice(at, at + (ATTR_LENGTH[i] as number))));
    const name = text.slice(start, start + length);
    if (names.has(name)) this.fail('it holds a tag with the same attribute twice', start);
    return names.add(name);
  }

  private sameText(a: number, b: number, length: number): boolean {
    const { text } = this;
    for (let i = 0; i < length; i++) if (text.charCodeAt(a + i) !== text.charCodeAt(b + i)) return false;
    return true;
  }

  /** `</name>`: compared with the name of the innermost open element where it stands, not read first. */
  private closingTag(lt: number): number {
    const { text } = this;
    const start = lt + 2;
    if (this.depth === 0) this.failOrCut('it holds a closing tag for an element that is not open', start);
    const index = this.depth - 1;
    const length = OPEN_LENGTH[index] as number;
    let p = start + length;
    if (p > text.length) this.cutShort();
    if (!this.sameText(OPEN_START[index] as number, start, length) || isNameChar(text.charCodeAt(p), false)) {
      this.fail('it holds a closing tag that does not match the element it closes', lt);
    }
    while (isSpace(text.charCodeAt(p))) p++;
    if (text.charCodeAt(p) !== GT) this.failOrCut('it holds a closing tag with more than a name', p);
    this.depth = index;
    if (index === 0) this.rootClosed = true;
    this.elementTag(lt, p + 1);
    return p + 1;
  }

  /** `<?target ...?>`, its end found as the parser finds it (a `?>` inside quotes does not end it). */
  private instruction(lt: number): number {
    const { text } = this;
    const start = lt + 2;
    let p = this.nameEnd(start);
    if (p === start) this.failOrCut('it holds a processing instruction without a name', p);
    if (p - start === 3 && text.slice(start, p).toLowerCase() === 'xml' && lt !== 0) this.fail('it holds an XML declaration that is not at the start', lt);
    for (;;) {
      const c = text.charCodeAt(p);
      if (c === DQUOTE || c === SQUOTE) {
        const close = text.indexOf(c === DQUOTE ? '"' : "'", p + 1);
        if (close < 0) this.fail('it holds a processing instruction with a quote that is not closed', p);
        p = close + 1;
      } else if (c === QUESTION && text.charCodeAt(p + 1) === GT) {
        return p + 2;
      } else if (p >= text.length) {
        this.cutShort();
      } else {
        p++;
      }
    }
  }

  /** `<!--` comments and `<![CDATA[` sections; a DTD and any other `<!` markup are refused. */
  private declaration(lt: number): number {
    const { text } = this;
    const c = text.charCodeAt(lt + 2);
    if (c === DASH && text.charCodeAt(lt + 3) === DASH) {
      const end = text.indexOf('-->', lt + 4);
      if (end < 0) this.cutShort();
      return end + 3;
    }
    if (c === LBRACKET && text.startsWith('CDATA[', lt + 3)) {
      if (this.depth === 0) this.fail('it holds character data outside the root element', lt);
      const end = text.indexOf(']]>', lt + 9);
      if (end < 0) this.cutShort();
      this.data();
      return end + 3;
    }
    if (/^(DOCTYPE|ENTITY)/i.test(text.slice(lt + 2, lt + 9))) throw new IpcamError('EPARSE', 'The answer carries a DTD, which is refused');
    return this.fail('it holds "<!" markup that is neither a comment nor character data', lt);
  }

  /** Where the name starting at `p` ends (`p` when no name starts there). */
  private nameEnd(p: number): number {
    const { text } = this;
    if (!isNameChar(text.charCodeAt(p), true)) return p;
    let at = p + 1;
    let c = text.charCodeAt(at);
    // isNameChar written out: this loop reads every character of every name.
    while (c < 0x80 ? ((ASCII_NAME[c] as number) & NAME_CHAR) !== 0 : isWideNameChar(c, false)) c = text.charCodeAt(++at);
    return at;
  }

  /** The text ended where more was due: a cut-short answer, never read as a shorter one. */
  private cutShort(): never {
    throw new IpcamError('EPARSE', `The answer is not well-formed XML: it ends before its elements are closed, cut short (line ${this.lineAt(this.text.length)})`);
  }

  private failOrCut(what: string, at: number): never {
    if (at >= this.text.length) this.cutShort();
    return this.fail(what, at);
  }

  private fail(what: string, at: number): never {
    throw new IpcamError('EPARSE', `The answer is not well-formed XML: ${what} (line ${this.lineAt(at)})`);
  }

  private lineAt(at: number): number {
    let line = 1;
    for (let nl = this.text.indexOf('\n'); nl >= 0 && nl < at; nl = this.text.indexOf('\n', nl + 1)) line++;
    return line;
  }
}
