import { Module } from '@nestjs/common';
import { FunctionsController } from './functions.controller.js';
import { FunctionsRepository } from './functions.repository.js';
import { FunctionsService } from './functions.service.js';
import { SearchModule } from '../search/search.module.js';

@Module({
  imports: [SearchModule],
  controllers: [FunctionsController],
  providers: [FunctionsRepository, FunctionsService],
  exports: [FunctionsRepository, FunctionsService],
})
export class FunctionsModule {}
