import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ValidationPlan } from './compiled-validation.js';
import { decodeIssue } from './issue.js';
import { RequestValidationError, type ValidationIssue } from './validation.error.js';

const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object]);

const LOCATION: Record<ArgumentMetadata['type'], string | undefined> = {
  body: 'body',
  query: 'query',
  param: 'path',
  custom: undefined,
};

/**
 * Turns path, query and body input into DTO instances and reports every violation at once in the
 * FastAPI 422 shape: `loc` is `[location, field, (index)...]`. Unknown fields are dropped, not refused.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly plans = new Map<unknown, ValidationPlan | null>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const location = LOCATION[metadata.type];
    const metatype = metadata.metatype;
    if (!location || !metatype || PRIMITIVES.has(metatype)) {
      return value;
    }
    if (location === 'body') {
      if (value === undefined || value === null || value === '') {
        throw new RequestValidationError([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
      }
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new RequestValidationError([
          {
            loc: ['body'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
            type: 'dict_type',
          },
        ]);
      }
    }
    const accepted = this.plan(metatype as new () => object)?.run(value ?? {});
    if (accepted) {
      return accepted;
    }
    // Not valid (or no plan): class-validator itself, which reports every violation.
    const instance = plainToInstance<object, unknown>(metatype as new () => object, value ?? {});
    const errors = validateSync(instance, { whitelist: true, forbidUnknownValues: false, stopAtFirstError: true });
    if (errors.length > 0) {
      throw new RequestValidationError(flatten(errors, [location]));
    }
    return instance;
  }

  private plan(metatype: new () => object): ValidationPlan | null {
    let plan = this.plans.get(metatype);
    if (plan === undefined) {
      plan = ValidationPlan.compile(metatype, (value) => plainToInstance(metatype, value));
      this.plans.set(metatype, plan);
    }
    return plan;
  }
}

function flatten(errors: ValidationError[], prefix: (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    const loc = [...prefix, error.property];
    for (const [constraint, message] of Object.entries(error.constraints ?? {})) {
      const issue = decodeIssue(constraint, message);
      issues.push({ loc: issue.index === undefined ? loc : [...loc, issue.index], msg: issue.msg, type: issue.type });
    }
    if (error.children?.length) {
      issues.push(...flatten(error.children, loc));
    }
  }
  return issues;
}
