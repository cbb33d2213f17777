import { Module } from '@nestjs/common';
import { CatalogRepository } from './catalog.repository.js';
import { CatalogService } from './catalog.service.js';
import { SearchModule } from '../search/search.module.js';

/** Imports apps and functions from catalogue folders (command line, first start, tests). */
@Module({
  imports: [SearchModule],
  providers: [CatalogRepository, CatalogService],
  exports: [CatalogService],
})
export class CatalogModule {}
