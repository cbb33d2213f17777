import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';

export class ErrorResponse {
  @ApiProperty({ description: 'What went wrong, naming the thing concerned', example: 'App GITHUB not found' })
  error: string;
}

export class ValidationErrorItem {
  @ApiProperty({
    description: 'Where the faulty input is: path, query or body, then the field (and index)',
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    example: ['query', 'limit'],
  })
  loc: (string | number)[];

  @ApiProperty({ example: 'Input should be less than or equal to 1000' })
  msg: string;

  @ApiProperty({ description: 'Stable machine word for the kind of problem', example: 'less_than_equal' })
  type: string;
}

export class HTTPValidationError {
  @ApiProperty({ type: [ValidationErrorItem] })
  detail: ValidationErrorItem[];
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'The request cannot be carried out as asked',
  401: 'Missing, unknown, expired or revoked API key',
  403: 'Not allowed in the current state',
  404: 'Not found in the caller project or the catalogue',
  409: 'Already exists',
  500: 'Unexpected failure; details are only in the service log',
};

/** Documents the `{error}` answers a route may give, plus the 422 shape when it validates input. */
export function ApiErrors(statuses: number[], options: { validated?: boolean } = {}): MethodDecorator {
  const decorators = [ApiExtraModels(ErrorResponse, HTTPValidationError)];
  for (const status of [...new Set([...statuses, 500])]) {
    decorators.push(
      ApiResponse({
        status,
        description: DESCRIPTIONS[status] ?? 'Error',
        schema: { $ref: getSchemaPath(ErrorResponse) },
      }),
    );
  }
  if (options.validated) {
    decorators.push(
      ApiResponse({
        status: 422,
        description: 'Invalid path, query or body input',
        schema: { $ref: getSchemaPath(HTTPValidationError) },
      }),
    );
  }
  return applyDecorators(...decorators);
}
