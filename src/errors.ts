// Every error a user can trigger, defined once: its stable OData error code, HTTP status and what it
// means. `docs/errors.md` lists the same codes; a test keeps the two in sync both ways.

export const errorCatalog = {
  InvalidSyntax: { status: 400, meaning: 'A query option value is not valid OData syntax.' },
  InvalidLiteral: {
    status: 400,
    meaning: 'A literal has the right shape but an impossible value (a month 13, a malformed duration or base64).',
  },
  InvalidEncoding: { status: 400, meaning: 'The query string has a malformed percent-encoding.' },
  UnknownFunction: {
    status: 400,
    meaning: 'A function name is not an OData canonical function (or a function of the model).',
  },
  UnknownProperty: { status: 400, meaning: 'A name is not a property of the entity type.' },
  UnknownType: { status: 400, meaning: 'A type name in cast, isof or a path is not a type this model has.' },
  TypeMismatch: { status: 400, meaning: 'Operand or argument types do not fit the operator or function.' },
  WrongArgumentCount: { status: 400, meaning: 'A function is called with the wrong number of arguments.' },
  NotBoolean: { status: 400, meaning: '$filter is not a Boolean expression.' },
  NotSortable: { status: 400, meaning: 'An $orderby item has no order (a binary value, a collection, null).' },
  NotQueryable: { status: 400, meaning: 'A property can be written but not read, filtered, sorted or selected.' },
  InvalidTop: { status: 400, meaning: '$top is not a non-negative integer within the limit.' },
  InvalidSkip: { status: 400, meaning: '$skip is not a non-negative integer within the limit.' },
  InvalidCount: { status: 400, meaning: '$count is neither true nor false.' },
  UnknownOption: { status: 400, meaning: 'A $-prefixed query option is not an OData system query option.' },
  DuplicateOption: { status: 400, meaning: 'A query option or parameter alias is given more than once.' },
  LimitExceeded: {
    status: 400,
    meaning: 'The request exceeds a configured limit (length, depth, list size, subqueries, a $top limit if set).',
  },
  InvalidBody: {
    status: 400,
    meaning:
      'A request body is not a JSON object, or a field in it is missing, read-only, of the wrong type or outside its facets.',
  },
  InvalidRequest: {
    status: 400,
    meaning: 'The request is not valid HTTP/1.1 (a malformed request line or header, no Host header).',
  },
  InvalidBatch: {
    status: 400,
    meaning:
      'A $batch body is malformed: a part without a request line or boundary, a GET in a change set, a bad request object, a reference to no preceding request.',
  },
  UnsupportedVersion: {
    status: 400,
    meaning:
      'OData-Version or OData-MaxVersion names a protocol version this service does not speak (it speaks 4.0 and 4.01).',
  },
  InvalidSkipToken: {
    status: 400,
    meaning: '$skiptoken is not one this service issued for this query (altered, or from another query or service).',
  },
  PayloadTooLarge: { status: 413, meaning: 'The request body, or a value in it, is larger than the service accepts.' },
  Unauthorized: {
    status: 401,
    meaning: 'The request carries no credentials, or an API key or user that is not valid for this site.',
  },
  NotFound: { status: 404, meaning: 'No site, entity set, entity or resource at the address.' },
  RequestTimeout: {
    status: 408,
    meaning: 'The request headers or body did not arrive in time (a slow or stalled client).',
  },
  LaborRecordNotFound: { status: 404, meaning: 'RemoveActualLabor found no labor record with the values given.' },
  MethodNotAllowed: { status: 405, meaning: 'The resource exists but does not answer this HTTP method (see Allow).' },
  NotAcceptable: {
    status: 406,
    meaning: 'The Accept header (or $format) asks for a representation the service cannot produce.',
  },
  Conflict: { status: 409, meaning: 'A create names a key that exists already.' },
  PreconditionFailed: {
    status: 412,
    meaning:
      'If-Match names an ETag the entity no longer has (it changed since it was read), or If-None-Match: * and it exists.',
  },
  PreconditionRequired: {
    status: 428,
    meaning: 'A change of an entity with an ETag is sent without If-Match, and the service requires one.',
  },
  FailedDependency: {
    status: 424,
    meaning:
      'A request of a batch was not run, or not kept, because a request it depends on (or of its change set) failed.',
  },
  UnsupportedMediaType: { status: 415, meaning: 'A request body is not sent as application/json.' },
  ExpectationFailed: { status: 417, meaning: 'An Expect header other than 100-continue.' },
  TooManyRequests: {
    status: 429,
    meaning: 'The credential (or, for failed sign-ins, the client address) sent more requests than its rate allows.',
  },
  HeadersTooLarge: { status: 431, meaning: 'The request headers are larger than the server accepts.' },
  NotImplemented: {
    status: 501,
    meaning: 'A valid OData system query option or resource ($batch, $ref...) this service does not implement.',
  },
  ServiceUnavailable: {
    status: 503,
    meaning: 'The server is shutting down, its database is unreachable, or every database connection is busy.',
  },
  QueryTimeout: { status: 504, meaning: 'The query did not finish within its time budget and was stopped.' },
} as const satisfies Record<string, { readonly status: number; readonly meaning: string }>;

export type ErrorCode = keyof typeof errorCatalog;

/** One further problem found in the same request (OData JSON error `details`). */
export interface ODataErrorDetail {
  readonly code: ErrorCode;
  readonly message: string;
  readonly target?: string;
  readonly position?: number;
}

export interface ODataErrorOptions {
  /** The query option (`$filter`), alias (`@p`) or body field the error is about. */
  readonly target?: string;
  /** Character position in the decoded value of `target`. */
  readonly position?: number;
  readonly details?: readonly ODataErrorDetail[];
}

/** An error meant for the client: a status, a stable code, a message a person can act on. */
export class ODataError extends Error {
  override readonly name = 'ODataError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly target: string | undefined;
  readonly position: number | undefined;
  readonly details: readonly ODataErrorDetail[];

  constructor(code: ErrorCode, message: string, options: ODataErrorOptions = {}) {
    super(message);
    this.code = code;
    this.status = errorCatalog[code].status;
    this.target = options.target;
    this.position = options.position;
    this.details = options.details ?? [];
  }
}

/**
 * The one place that says where a problem is: what was found, then the location, then the hint:
 * `Unexpected 'eqq' at position 5 of $filter; did you mean 'eq'?`.
 */
export function atPosition(what: string, position: number, target: string, hint?: string): string {
  return `${what} at position ${position} of ${target}${hint === undefined ? '' : `; ${hint}`}`;
}

/** An `ODataError` located at `position` of `target`. */
export function errorAt(code: ErrorCode, what: string, target: string, position: number, hint?: string): ODataError {
  return new ODataError(code, atPosition(what, position, target, hint), { target, position });
}

/**
 * Runs `run`; an ODataError it throws is added to `problems` and gives undefined, so that every option of a request
 * is checked and all their problems reported together (combineErrors). Any other error is thrown on.
 */
export function collectProblem<T>(problems: ODataError[], run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    if (error instanceof ODataError) {
      problems.push(error);
      return undefined;
    }
    throw error;
  }
}

/** Several problems of one request as one error: the first, with the others in `details`. */
export function combineErrors(problems: readonly ODataError[]): ODataError {
  const [first, ...rest] = problems as [ODataError, ...ODataError[]];
  if (rest.length === 0) return first;
  const details: ODataErrorDetail[] = rest.map((p) => ({
    code: p.code,
    message: p.message,
    ...(p.target === undefined ? {} : { target: p.target }),
    ...(p.position === undefined ? {} : { position: p.position }),
  }));
  return new ODataError(first.code, first.message, {
    ...(first.target === undefined ? {} : { target: first.target }),
    ...(first.position === undefined ? {} : { position: first.position }),
    details: [...first.details, ...details],
  });
}

export function isODataError(value: unknown): value is ODataError {
  return value instanceof ODataError;
}

export interface ODataErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly target?: string;
    readonly details?: readonly { readonly code: string; readonly message: string; readonly target?: string }[];
  };
}

/** The OData JSON error body. Never includes stacks or internals: unknown errors become a generic 500 body. */
export function toODataErrorBody(error: unknown): ODataErrorBody {
  if (!isODataError(error)) {
    return { error: { code: 'InternalError', message: 'The service could not complete the request.' } };
  }
  const details = error.details.map((d) => ({
    code: d.code,
    message: d.message,
    ...(d.target === undefined ? {} : { target: d.target }),
  }));
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.target === undefined ? {} : { target: error.target }),
      ...(details.length === 0 ? {} : { details }),
    },
  };
}
