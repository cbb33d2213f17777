import { Module } from '@nestjs/common';
import { FunctionsRepository } from './functions.repository.js';

@Module({
  providers: [FunctionsRepository],
  exports: [FunctionsRepository],
})
export class FunctionsModule {}
