/** One item of the 422 body, shaped like FastAPI's so that ACI-compatible clients parse it unchanged. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Thrown by the validation pipe (and by the filter for malformed bodies); rendered as 422 `{detail}`. */
export class RequestValidationError extends Error {
  constructor(readonly detail: ValidationIssue[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}
