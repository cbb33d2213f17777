import { NotFoundError } from '../../libs/common/src/index.js';

export class FunctionNotFoundError extends NotFoundError {
  constructor(name: string) {
    super(`Function ${name} not found`);
  }
}
