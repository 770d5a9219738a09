/**
 * CGI interface text: request targets with every key and value percent-encoded (spec rule 3;
 * field notes: these devices had injection bugs, so nothing goes out raw), and `key=value` answers.
 */
export type CgiValue = string | number | boolean;

/**
 * Query parameters in order. A pair list keeps repeated keys (`move=left&move=repeat`); in an
 * object an array value repeats the key. `null` sends the bare key (`removeallpreset`);
 * `undefined` leaves the parameter out.
 */
export type CgiParams =
  | ReadonlyArray<readonly [string, CgiValue | null]>
  | Readonly<Record<string, CgiValue | null | undefined | ReadonlyArray<CgiValue>>>;

export function buildCgiPath(path: string, params?: CgiParams): string {
  const query = encodeQuery(params);
  return query === '' ? path : `${path}?${query}`;
}

export function encodeQuery(params: CgiParams | undefined): string {
  if (params === undefined) return '';
  const parts: string[] = [];
  const add = (key: string, value: CgiValue | null): void => {
    parts.push(value === null ? encodeCgi(key) : `${encodeCgi(key)}=${encodeCgi(String(value))}`);
  };
  if (isPairList(params)) {
    for (const [key, value] of params) add(key, value);
  } else {
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value as CgiValue[]) add(key, v);
      else add(key, value as CgiValue | null);
    }
  }
  return parts.join('&');
}

function isPairList(params: CgiParams): params is ReadonlyArray<readonly [string, CgiValue | null]> {
  return Array.isArray(params);
}

/** Encodes the reserved characters of spec rule 3, spaces, `%` and non-ASCII (UTF-8). */
export function encodeCgi(text: string): string {
  return encodeURIComponent(text);
}

/**
 * Parses `key=value` lines. The `root.` prefix is dropped (devices add it even when not asked),
 * `\r` is stripped, blank lines and lines without `=` are skipped. Order is kept.
 */
export function parseKeyValues(body: string | Buffer): Map<string, string> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r/g, '');
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim().replace(/^root\./, '');
    out.set(key, line.slice(eq + 1));
  }
  return out;
}
