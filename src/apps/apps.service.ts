import { Injectable } from '@nestjs/common';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { SearchIndexService } from '../search/search-index.service.js';
import type { AppBasic, AppBasicWithFunctions, SearchAppsQuery } from './apps.dto.js';
import { AppNotFoundError } from './apps.errors.js';
import { AppsRepository } from './apps.repository.js';

@Injectable()
export class AppsService {
  constructor(
    private readonly apps: AppsRepository,
    private readonly functions: FunctionsRepository,
    private readonly search: SearchIndexService,
  ) {}

  /** With an intent, by relevance (see SearchIndexService); without one, or one with no searchable word, by name. */
  async searchApps(projectId: string, query: SearchAppsQuery): Promise<AppBasic[]> {
    const request = {
      projectId,
      configuredOnly: query.configured_only,
      categories: query.categories,
      limit: query.limit,
      offset: query.offset,
    };
    const intent = query.intent?.trim();
    if (intent) {
      const ranked = await this.search.searchApps({ ...request, intent });
      if (ranked) {
        return ranked;
      }
    }
    return this.apps.search(request);
  }

  async getApp(name: string): Promise<AppBasicWithFunctions> {
    const app = await this.apps.findVisibleByName(name);
    if (!app) {
      throw new AppNotFoundError(name);
    }
    const functions = await this.functions.visibleOfApp(name);
    return { name: app.name, description: app.description, functions };
  }
}
