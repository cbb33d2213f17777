import { Module } from '@nestjs/common';
import { FunctionsModule } from '../functions/functions.module.js';
import { SearchModule } from '../search/search.module.js';
import { AppsController } from './apps.controller.js';
import { AppsRepository } from './apps.repository.js';
import { AppsService } from './apps.service.js';

@Module({
  imports: [FunctionsModule, SearchModule],
  controllers: [AppsController],
  providers: [AppsRepository, AppsService],
  exports: [AppsRepository],
})
export class AppsModule {}
