import { NotFoundError } from '../../libs/common/src/index.js';

export class AppNotFoundError extends NotFoundError {
  constructor(name: string) {
    super(`App ${name} not found`);
  }
}
