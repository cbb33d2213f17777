import { Injectable } from '@nestjs/common';
import type { FunctionDefinition, FunctionBasic, InferenceProvider, SearchFunctionsQuery } from './functions.dto.js';
import { FunctionNotFoundError } from './functions.errors.js';
import { FunctionsRepository } from './functions.repository.js';
import { SearchIndexService } from '../search/search-index.service.js';
import { visibleParameters } from './visible-parameters.js';

@Injectable()
export class FunctionsService {
  constructor(
    private readonly functions: FunctionsRepository,
    private readonly search: SearchIndexService,
  ) {}

  /** With an intent, by relevance (see SearchIndexService); without one, or one with no searchable word, by name. */
  async searchFunctions(projectId: string, query: SearchFunctionsQuery): Promise<FunctionBasic[]> {
    const request = {
      projectId,
      appNames: query.app_names,
      configuredOnly: query.configured_only,
      limit: query.limit,
      offset: query.offset,
    };
    const intent = query.intent?.trim();
    if (intent) {
      const ranked = await this.search.searchFunctions({ ...request, intent });
      if (ranked) {
        return ranked;
      }
    }
    return this.functions.search(request);
  }

  /** The function as an LLM tool definition; only its visible parameters are shown. */
  async getFunctionDefinition(name: string, provider: InferenceProvider): Promise<FunctionDefinition> {
    const fn = await this.functions.findVisibleByName(name);
    if (!fn) {
      throw new FunctionNotFoundError(name);
    }
    const schema = visibleParameters(fn.parameters);
    switch (provider) {
      case 'openai':
        return { type: 'function', function: { name: fn.name, description: fn.description, parameters: schema } };
      case 'anthropic':
        return { name: fn.name, description: fn.description, input_schema: schema };
    }
  }
}
