/**
 * Parser for `WWW-Authenticate` (RFC 9110 section 11.6.1): one header may hold several
 * challenges, and a device may send several headers.
 */
export interface Challenge {
  /** Lower-case scheme name, e.g. `basic`, `digest`. */
  scheme: string;
  /** Auth-params with lower-case names and unquoted values. */
  params: Record<string, string>;
}

const TOKEN = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

export function parseChallenges(header: string | string[] | undefined): Challenge[] {
  if (header === undefined) return [];
  const headers = Array.isArray(header) ? header : [header];
  return headers.flatMap(parseOneHeader);
}

function parseOneHeader(text: string): Challenge[] {
  const challenges: Challenge[] = [];
  let pos = 0;
  let current: Challenge | undefined;

  const skipSpace = (): void => {
    while (pos < text.length && (text[pos] === ' ' || text[pos] === '\t')) pos++;
  };
  const readToken = (): string => {
    const start = pos;
    while (pos < text.length && TOKEN.test(text[pos] as string)) pos++;
    return text.slice(start, pos);
  };
  const readQuoted = (): string => {
    let value = '';
    pos++; // opening quote
    while (pos < text.length && text[pos] !== '"') {
      if (text[pos] === '\\' && pos + 1 < text.length) pos++;
      value += text[pos];
      pos++;
    }
    pos++; // closing quote
    return value;
  };

  while (pos < text.length) {
    skipSpace();
    if (text[pos] === ',') {
      pos++;
      continue;
    }
    const token = readToken();
    if (token === '') {
      pos++; // not a token character: skip it rather than loop forever
      continue;
    }
    skipSpace();
    if (text[pos] === '=' && current !== undefined) {
      pos++;
      skipSpace();
      const value = text[pos] === '"' ? readQuoted() : readToken();
      current.params[token.toLowerCase()] = value;
    } else if (text[pos] === '=') {
      // a token68 or a param before any scheme: nothing we can use
      while (pos < text.length && text[pos] !== ',') pos++;
    } else {
      current = { scheme: token.toLowerCase(), params: {} };
      challenges.push(current);
    }
  }
  return challenges;
}
