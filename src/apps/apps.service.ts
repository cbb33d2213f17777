import { Injectable } from '@nestjs/common';
import { stableId } from '../catalog-rules/stable-id.js';
import type { FunctionEntity } from '../functions/function.entity.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { functionDetails } from '../functions/functions.service.js';
import { SearchIndexService } from '../search/search-index.service.js';
import type { AppEntity } from './app.entity.js';
import type { AppBasic, AppDetails, ListAppsQuery, SearchAppsQuery, SecuritySchemesPublic } from './apps.dto.js';
import { AppNotFoundError } from './apps.errors.js';
import { AppsRepository } from './apps.repository.js';
import { SECURITY_SCHEMES } from './security-scheme.js';

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
      configuredOnly: query.configured_only || query.allowed_apps_only,
      categories: query.categories,
      limit: query.limit,
      offset: query.offset,
    };
    const intent = query.intent?.trim();
    const found =
      (intent ? await this.search.searchApps({ ...request, intent }) : undefined) ?? (await this.apps.search(request));
    const apps: AppBasic[] = found.map((app) => ({ name: app.name, description: app.description }));
    if (query.include_functions && apps.length > 0) {
      const functions = groupByApp(
        await this.functions.findVisible({ projectId, appNames: apps.map((app) => app.name) }),
      );
      for (const app of apps) {
        app.functions = (functions.get(app.name) ?? []).map((fn) => ({ name: fn.name, description: fn.description }));
      }
    }
    return apps;
  }

  async getApp(projectId: string, name: string): Promise<AppDetails> {
    const app = await this.apps.findVisibleByName(name, projectId);
    if (!app) {
      throw new AppNotFoundError(name);
    }
    return appDetails(app, await this.functions.findVisible({ projectId, appNames: [name] }));
  }

  /** Apps visible to the project with their details, by name. */
  async listApps(projectId: string, query: ListAppsQuery): Promise<AppDetails[]> {
    const apps = await this.apps.listVisible({
      projectId,
      appNames: query.app_names,
      limit: query.limit,
      offset: query.offset,
    });
    if (apps.length === 0) {
      return [];
    }
    const functions = groupByApp(
      await this.functions.findVisible({ projectId, appNames: apps.map((app) => app.name) }),
    );
    return apps.map((app) => appDetails(app, functions.get(app.name) ?? []));
  }
}

function groupByApp(functions: FunctionEntity[]): Map<string, FunctionEntity[]> {
  const byApp = new Map<string, FunctionEntity[]>();
  for (const fn of functions) {
    const list = byApp.get(fn.app_name);
    if (list) {
      list.push(fn);
    } else {
      byApp.set(fn.app_name, [fn]);
    }
  }
  return byApp;
}

/** An app row as ACI's AppDetails: scheme names and their public part only, never a secret. */
function appDetails(app: AppEntity, functions: FunctionEntity[]): AppDetails {
  const schemes = SECURITY_SCHEMES.filter((scheme) => app.security_schemes[scheme] !== undefined);
  const supported: SecuritySchemesPublic = {};
  for (const scheme of schemes) {
    if (scheme === 'oauth2') {
      const scope = app.security_schemes.oauth2?.scope;
      supported.oauth2 = { scope: typeof scope === 'string' ? scope : '' };
    } else {
      supported[scheme] = {};
    }
  }
  return {
    id: stableId('app', app.name),
    name: app.name,
    display_name: app.display_name,
    provider: app.provider,
    version: app.version,
    description: app.description,
    logo: app.logo === '' ? null : app.logo,
    categories: app.categories,
    visibility: app.visibility,
    active: app.active,
    security_schemes: schemes,
    supported_security_schemes: supported,
    functions: functions.map(functionDetails),
    created_at: app.created_at.toISOString(),
    updated_at: app.updated_at.toISOString(),
  };
}
