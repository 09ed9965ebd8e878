// Content negotiation (RFC 9110 §12.5.1, OData 4.01 Protocol §8.2.1 and JSON Format §3–4): which representation of a
// resource the client accepts, from `$format` (which overrides the header) or the `Accept` header. A request that
// accepts nothing the service can produce is a 406; an absent header accepts anything.
import { ODataError } from '../errors.js';

/** How an OData JSON answer is written for this request. */
export interface JsonFormat {
  /**
   * `minimal` (context URL and the annotations the format requires), `full` (also each entity's type, id, edit or
   * read link and navigation links) or `none` (no context URL).
   */
  readonly metadata: 'minimal' | 'full' | 'none';
  /** IEEE754Compatible=true: Int64 and Decimal values (and `@odata.count`) as strings. */
  readonly ieee754Compatible: boolean;
  /** The answer's Content-Type: the format parameters chosen, and a charset only when the client named one. */
  readonly contentType: string;
}

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  /** Media-type parameters (before `q`), names lower-cased, values unquoted. */
  readonly parameters: ReadonlyMap<string, string>;
  readonly q: number;
  /** Its place in the header, to keep the client's order among equals. */
  readonly index: number;
}

/** `type/subtype;a=b;q=0.5, ...` as media ranges; malformed ranges are skipped (a sender error must not be a 500). */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  splitOutsideQuotes(header, ',').forEach((part, index) => {
    const [mediaType = '', ...rest] = splitOutsideQuotes(part, ';').map((p) => p.trim());
    const slash = mediaType.indexOf('/');
    if (slash <= 0 || slash === mediaType.length - 1) return;
    const parameters = new Map<string, string>();
    let q = 1;
    for (const parameter of rest) {
      const eq = parameter.indexOf('=');
      if (eq <= 0) continue;
      const name = parameter.slice(0, eq).trim().toLowerCase();
      let value = parameter.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2)
        value = value.slice(1, -1).replace(/\\(.)/g, '$1');
      if (name === 'q') {
        // everything after q is an accept extension, not a media-type parameter (RFC 9110 §12.5.1)
        const weight = Number(value);
        q = Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0;
        break;
      }
      parameters.set(name, value);
    }
    ranges.push({
      type: mediaType.slice(0, slash).toLowerCase(),
      subtype: mediaType.slice(slash + 1).toLowerCase(),
      parameters,
      q,
      index,
    });
  });
  return ranges;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** How specifically a range names `type/subtype`: 2 exact, 1 `type/*`, 0 `*\/*`, -1 not at all. */
function specificity(range: MediaRange, type: string, subtype: string): number {
  if (range.type === type && range.subtype === subtype) return 2;
  if (range.type === type && range.subtype === '*') return 1;
  if (range.type === '*' && range.subtype === '*') return 0;
  return -1;
}

/**
 * The ranges that name `type/subtype`, best first (higher q, then more specific, then the client's order). A range
 * with q=0 excludes the type when no more specific range names it with a positive q (RFC 9110: the most specific
 * range decides).
 */
function candidates(ranges: readonly MediaRange[], type: string, subtype: string): MediaRange[] {
  const matching = ranges.filter((r) => specificity(r, type, subtype) >= 0);
  const mostSpecific = Math.max(-1, ...matching.map((r) => specificity(r, type, subtype)));
  const excluded = matching.some((r) => r.q === 0 && specificity(r, type, subtype) === mostSpecific);
  if (excluded && !matching.some((r) => r.q > 0 && specificity(r, type, subtype) === mostSpecific)) return [];
  return matching
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || specificity(b, type, subtype) - specificity(a, type, subtype) || a.index - b.index);
}

/** The highest q with which the ranges accept `type/subtype` (0: not at all). */
function quality(ranges: readonly MediaRange[], type: string, subtype: string): number {
  return candidates(ranges, type, subtype)[0]?.q ?? 0;
}

/** The `Accept` value in force: `$format` when given (a short name or a media type), else the header. */
function acceptOf(accept: string | undefined, format: string | undefined): string | undefined {
  if (format === undefined) return accept;
  const short = format.trim().toLowerCase();
  if (short === 'json') return 'application/json';
  if (short === 'xml' || short === 'atom') return 'application/xml';
  return format;
}

function notAcceptable(what: string, format: string | undefined): ODataError {
  return new ODataError(
    'NotAcceptable',
    `The service answers this resource as ${what}; ${format === undefined ? 'the Accept header allows' : `$format=${format.slice(0, 80)} asks for`} none of it`,
    format === undefined ? {} : { target: '$format' },
  );
}

/** Formats negotiated already, by their headers: clients send the same few Accept headers again and again. */
const negotiated = new Map<string, JsonFormat>();
const NEGOTIATED_MAX = 256;
const UNSET = '\u0000';

/** OData JSON for data (collections, entities, properties, the service document). */
export function negotiateJson(
  accept: string | undefined,
  format: string | undefined,
  requestContentType: string | undefined,
): JsonFormat {
  const memo = `${accept ?? UNSET}\n${format ?? UNSET}\n${requestContentType ?? UNSET}`;
  let found = negotiated.get(memo);
  if (found === undefined) {
    found = negotiateJsonOnce(accept, format, requestContentType);
    // (short keys only: a client cannot fill memory with long Accept headers)
    if (memo.length <= 512) {
      if (negotiated.size >= NEGOTIATED_MAX) negotiated.clear();
      negotiated.set(memo, found);
    }
  }
  return found;
}

function negotiateJsonOnce(
  accept: string | undefined,
  format: string | undefined,
  requestContentType: string | undefined,
): JsonFormat {
  // IEEE754Compatible on the request's own Content-Type also asks for string numbers back (clients set it once)
  const bodyAsks = /(?:^|;)\s*ieee754compatible\s*=\s*"?true/i.test(requestContentType ?? '');
  const value = acceptOf(accept, format);
  if (value === undefined || value.trim() === '') return jsonFormat('minimal', bodyAsks, false);
  for (const range of candidates(parseAccept(value), 'application', 'json')) {
    const metadata = (
      range.parameters.get('odata.metadata') ??
      range.parameters.get('metadata') ??
      'minimal'
    ).toLowerCase();
    if (metadata !== 'minimal' && metadata !== 'full' && metadata !== 'none') continue;
    const charset = range.parameters.get('charset')?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') continue;
    const ieee = (range.parameters.get('ieee754compatible') ?? '').toLowerCase();
    return jsonFormat(metadata, ieee === 'true' || bodyAsks, charset !== undefined);
  }
  throw notAcceptable('application/json with odata.metadata=minimal, full or none', format);
}

function jsonFormat(metadata: JsonFormat['metadata'], ieee754Compatible: boolean, charset: boolean): JsonFormat {
  return {
    metadata,
    ieee754Compatible,
    contentType: `application/json;odata.metadata=${metadata};odata.streaming=true${ieee754Compatible ? ';IEEE754Compatible=true' : ''}${charset ? ';charset=utf-8' : ''}`,
  };
}

/** `$metadata`: CSDL XML (the default) or CSDL JSON, whichever the client prefers. */
export function negotiateMetadata(accept: string | undefined, format: string | undefined): 'xml' | 'json' {
  const value = acceptOf(accept, format);
  if (value === undefined || value.trim() === '') return 'xml';
  const ranges = parseAccept(value);
  const xml = quality(ranges, 'application', 'xml');
  const json = quality(ranges, 'application', 'json');
  if (xml === 0 && json === 0)
    throw notAcceptable('application/xml (CSDL XML) or application/json (CSDL JSON)', format);
  // a tie (*/*) keeps XML, the OData default for $metadata
  return json > xml ? 'json' : 'xml';
}

/** A raw value (`/$count`, `/$value`): its one media type, or 406. */
export function negotiateRaw(accept: string | undefined, format: string | undefined, mediaType: string): void {
  const value = acceptOf(accept, format);
  if (value === undefined || value.trim() === '') return;
  const [type, subtype] = mediaType.split('/') as [string, string];
  if (quality(parseAccept(value), type, subtype) === 0) throw notAcceptable(mediaType, format);
}
