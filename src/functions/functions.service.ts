import { Injectable } from '@nestjs/common';
import { SearchIndexService } from '../search/search-index.service.js';
import type { FunctionEntity } from './function.entity.js';
import { functionDefinition } from './function-definition.js';
import type {
  DefinitionFormat,
  FunctionDefinition,
  FunctionDefinitionQuery,
  FunctionDetails,
  ListFunctionsQuery,
  SearchFunctionsQuery,
} from './functions.dto.js';
import { FunctionNotFoundError } from './functions.errors.js';
import { FunctionsRepository } from './functions.repository.js';
import { stableId } from '../catalog-rules/stable-id.js';

@Injectable()
export class FunctionsService {
  constructor(
    private readonly functions: FunctionsRepository,
    private readonly search: SearchIndexService,
  ) {}

  /**
   * With an intent, by relevance (see SearchIndexService); without one, or one with no searchable word, by name.
   * Each result in the asked format; formats other than `basic` carry the visible parameters.
   */
  async searchFunctions(projectId: string, query: SearchFunctionsQuery): Promise<FunctionDefinition[]> {
    const request = {
      projectId,
      appNames: query.app_names,
      // ACI's names for the filter; whichever is set, only what the project can run is listed.
      configuredOnly: query.configured_only || query.allowed_apps_only || query.allowed_only,
      limit: query.limit,
      offset: query.offset,
    };
    const intent = query.intent?.trim();
    const hits =
      (intent ? await this.search.searchFunctions({ ...request, intent }) : undefined) ??
      (await this.functions.search(request));
    if (query.format === 'basic' || hits.length === 0) {
      return hits.map((hit) => ({ name: hit.name, description: hit.description }));
    }
    const rows = await this.functions.findVisible({ projectId, functionNames: hits.map((hit) => hit.name) });
    const byName = new Map(rows.map((row) => [row.name, row]));
    // A function made invisible between the search and this read is left out rather than shown.
    return hits.flatMap((hit) => {
      const row = byName.get(hit.name);
      return row ? [functionDefinition(row, query.format)] : [];
    });
  }

  /** The function as an LLM tool definition; only its visible parameters are shown. */
  async getFunctionDefinition(
    projectId: string,
    name: string,
    query: FunctionDefinitionQuery,
  ): Promise<FunctionDefinition> {
    const fn = await this.functions.findVisibleByName(name, projectId);
    if (!fn) {
      throw new FunctionNotFoundError(name);
    }
    const format: DefinitionFormat = query.format ?? query.inference_provider ?? 'openai';
    return functionDefinition(fn, format);
  }

  /** Functions visible to the project with their details, by name. */
  async listFunctions(projectId: string, query: ListFunctionsQuery): Promise<FunctionDetails[]> {
    const rows = await this.functions.findVisible({
      projectId,
      appNames: query.app_names,
      functionNames: query.function_names,
      limit: query.limit,
      offset: query.offset,
    });
    return rows.map(functionDetails);
  }
}

/** A function row as ACI's FunctionDetails. */
export function functionDetails(fn: FunctionEntity): FunctionDetails {
  return {
    id: stableId('function', fn.name),
    app_name: fn.app_name,
    name: fn.name,
    description: fn.description,
    tags: fn.tags,
    visibility: fn.visibility,
    active: fn.active,
    protocol: fn.protocol,
    protocol_data: { ...fn.protocol_data },
    parameters: fn.parameters,
    response: fn.response,
    created_at: fn.created_at.toISOString(),
    updated_at: fn.updated_at.toISOString(),
  };
}
