import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CatalogRepository } from './catalog.repository.js';
import { CatalogService } from './catalog.service.js';
import { OpenApiImportService } from './openapi/openapi-import.service.js';
import { SearchModule } from '../search/search.module.js';

/** Imports apps and functions from catalogue folders and OpenAPI documents (command line, first start, tests). */
@Module({
  imports: [SearchModule, AuditModule],
  providers: [CatalogRepository, CatalogService, OpenApiImportService],
  exports: [CatalogService, OpenApiImportService],
})
export class CatalogModule {}
