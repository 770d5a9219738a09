/**
 * Entity and character references in text and attribute values: the five entities XML predefines
 * and numeric character references (`&#228;`, `&#xE4;`). Any other name (a DTD's, an HTML name
 * such as `&nbsp;`) stays as written: no DTD is read, so nothing can define or expand one.
 */

/** Characters between `&` and `;` looked at: the longest reference is `&#x10FFFF;` or a short name. */
const MAX_REFERENCE = 32;

const HASH = 0x23;
const SEMICOLON = 0x3b;

/** Text with every reference it holds replaced, in one pass (`&amp;lt;` gives `&lt;`). */
export function decodeReferences(text: string): string {
  let amp = text.indexOf('&');
  if (amp < 0) return text;
  let out = '';
  let copied = 0;
  while (amp >= 0) {
    let semicolon = amp + 1;
    const limit = Math.min(text.length, amp + 1 + MAX_REFERENCE);
    while (semicolon < limit && text.charCodeAt(semicolon) !== SEMICOLON) semicolon++;
    const replacement = semicolon < limit ? resolve(text.slice(amp + 1, semicolon)) : undefined;
    if (replacement === undefined) {
      amp = text.indexOf('&', amp + 1);
      continue;
    }
    out += text.slice(copied, amp) + replacement;
    copied = semicolon + 1;
    amp = text.indexOf('&', copied);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** What a reference stands for, '' for a character XML 1.0 does not allow, undefined to leave it as written. */
function resolve(token: string): string | undefined {
  switch (token) {
    case 'lt':
      return '<';
    case 'gt':
      return '>';
    case 'amp':
      return '&';
    case 'quot':
      return '"';
    case 'apos':
      return "'";
  }
  if (token.charCodeAt(0) !== HASH) return undefined;
  const hex = token[1] === 'x' || token[1] === 'X';
  const digits = token.slice(hex ? 2 : 1);
  if (!(hex ? /^[0-9A-Fa-f]+$/ : /^[0-9]+$/).test(digits)) return undefined;
  const code = parseInt(digits, hex ? 16 : 10);
  if (code > 0x10ffff) return undefined;
  // NUL, surrogate halves and the C0 controls other than tab, line feed and carriage return.
  if (code === 0 || (code >= 0xd800 && code <= 0xdfff) || (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d)) return '';
  return String.fromCodePoint(code);
}

/**
 * The entity decoder handed to fast-xml-parser (its `entityDecoder` option): references as
 * above, and none defined by the document. The parser asks to add a document's entities only
 * when it reads a DTD, which `checkWellFormed` refuses first; should one get through, the parse
 * fails instead.
 */
export const XML_REFERENCES = Object.freeze({
  decode: decodeReferences,
  reset(): void {},
  setXmlVersion(): void {},
  setExternalEntities(): void {
    throw new Error('No entities are defined');
  },
  addInputEntities(): void {
    throw new Error('A DTD is refused');
  },
});
