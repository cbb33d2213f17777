import { Injectable } from '@nestjs/common';
import { FunctionsRepository } from '../functions/functions.repository.js';
import type { AppBasic, AppBasicWithFunctions, SearchAppsQuery } from './apps.dto.js';
import { AppNotFoundError } from './apps.errors.js';
import { AppsRepository } from './apps.repository.js';

@Injectable()
export class AppsService {
  constructor(
    private readonly apps: AppsRepository,
    private readonly functions: FunctionsRepository,
  ) {}

  searchApps(projectId: string, query: SearchAppsQuery): Promise<AppBasic[]> {
    return this.apps.search({
      projectId,
      // A blank intent carries no words to rank by: fall back to name order.
      intent: query.intent?.trim() || undefined,
      configuredOnly: query.configured_only,
      categories: query.categories,
      limit: query.limit,
      offset: query.offset,
    });
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
