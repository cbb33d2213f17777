import { Injectable } from '@nestjs/common';
import type { FunctionDefinition, FunctionBasic, InferenceProvider, SearchFunctionsQuery } from './functions.dto.js';
import { FunctionNotFoundError } from './functions.errors.js';
import { FunctionsRepository } from './functions.repository.js';
import { visibleParameters } from './visible-parameters.js';

@Injectable()
export class FunctionsService {
  constructor(private readonly functions: FunctionsRepository) {}

  searchFunctions(projectId: string, query: SearchFunctionsQuery): Promise<FunctionBasic[]> {
    return this.functions.search({
      projectId,
      appNames: query.app_names,
      // A blank intent carries no words to rank by: fall back to name order.
      intent: query.intent?.trim() || undefined,
      configuredOnly: query.configured_only,
      limit: query.limit,
      offset: query.offset,
    });
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
