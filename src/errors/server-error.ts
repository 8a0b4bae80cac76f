import { ServerError } from 'nice-grpc';
import { ERROR_CATALOG, type ErrorCode } from './catalog';

/** A catalogued error: a nice-grpc ServerError that knows its code and HTTP status. */
export class ZdError extends ServerError {
  constructor(
    readonly zdCode: ErrorCode,
    readonly params: Record<string, string | number>,
  ) {
    const spec = ERROR_CATALOG[zdCode];
    super(spec.grpc, `${zdCode}: ${format(spec.message, params)}`);
  }

  get httpStatus(): number {
    return ERROR_CATALOG[this.zdCode].http;
  }
}

function format(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => (k in params ? String(params[k]) : `{${k}}`));
}

export function zdError(code: ErrorCode, params: Record<string, string | number> = {}): ZdError {
  return new ZdError(code, params);
}

/** Shorthand for the commonest one: a field of a request is bad. */
export function invalidArgument(field: string, reason: string): ZdError {
  return new ZdError('ZD_INVALID_ARGUMENT', { field, reason });
}
