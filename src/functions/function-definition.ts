import type { DefinitionFormat, FunctionDefinition } from './functions.dto.js';
import { visibleParameters } from './visible-parameters.js';

export interface DefinableFunction {
  name: string;
  description: string;
  /** The catalogue's parameter schema, with its `visible` lists. */
  parameters: Record<string, unknown>;
}

/** A function in one of the LLM tool shapes; only its visible parameters are shown. */
export function functionDefinition(fn: DefinableFunction, format: DefinitionFormat): FunctionDefinition {
  if (format === 'basic') {
    return { name: fn.name, description: fn.description };
  }
  const schema = visibleParameters(fn.parameters);
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name: fn.name, description: fn.description, parameters: schema } };
    case 'openai_responses':
      return { type: 'function', name: fn.name, description: fn.description, parameters: schema };
    case 'anthropic':
      return { name: fn.name, description: fn.description, input_schema: schema };
  }
}
