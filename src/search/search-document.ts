import { createHash } from 'node:crypto';
import { nameStems, stems } from './text-analysis.js';
import { visibleNames } from '../catalog-rules/visible-parameters.js';

export type SearchKind = 'app' | 'function';

export interface AppText {
  name: string;
  display_name: string;
  description: string;
  categories: string[];
}

export interface FunctionText {
  name: string;
  app_name: string;
  description: string;
  tags: string[];
  parameters: Record<string, unknown>;
  /** A REST function's method and path (others: absent). */
  protocol_data?: { method?: unknown; path?: unknown } | null;
}

/**
 * The text fields search ranks on. `name`: the item's own name; `app`: its app's names (for an app,
 * empty); `tags`: tags or categories; `description`; `params`: parameter names; `context`: the
 * surroundings (an app's function names, a function's app description and categories); `operation`:
 * what a REST function does by its method and path ("list voices" for GET /v1/voices).
 */
export const SEARCH_FIELDS = ['name', 'app', 'tags', 'description', 'params', 'context', 'operation'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

export interface SearchDocument {
  kind: SearchKind;
  name: string;
  app_name: string;
  fields: Record<SearchField, string>;
  /** The text an embedding model reads. */
  embedding_text: string;
  /** Hash of the fields and the embedding text: an unchanged hash needs no new embedding. */
  text_hash: string;
}

/** The function's own part of its name: GMAIL__SEND_EMAIL → "SEND EMAIL". */
export function functionLocalName(name: string): string {
  const cut = name.indexOf('__');
  return (cut >= 0 ? name.slice(cut + 2) : name).replace(/_/g, ' ');
}

function appTitle(app: AppText): string {
  return `${app.name.replace(/_/g, ' ')} ${app.display_name}`;
}

/** What an app's document takes from each of its functions. */
export type FunctionSummaryText = Pick<FunctionText, 'name' | 'description' | 'tags'>;

/**
 * An app is described by its own text and, as context with a low weight, what its functions say:
 * "channels, pins and reactions" finds Slack through PINS_ADD and REACTIONS_ADD.
 */
export function appDocument(app: AppText, functions: FunctionSummaryText[]): SearchDocument {
  const fields: Record<SearchField, string> = {
    name: appTitle(app),
    app: '',
    tags: app.categories.join(' '),
    description: app.description,
    params: '',
    context: functions.map((fn) => `${functionLocalName(fn.name)} ${fn.tags.join(' ')} ${fn.description}`).join(' '),
    operation: '',
  };
  // Function names tell what the app does in the words agents use; capped so the text stays short.
  const names = functions.slice(0, 40).map((fn) => functionLocalName(fn.name).toLowerCase());
  const embedding = `${app.display_name}: ${app.description} Categories: ${app.categories.join(', ')}. Functions: ${names.join(', ')}.`;
  return finish('app', app.name, app.name, fields, embedding);
}

/**
 * A function is described by its name, tags, description and parameter names and by its app (names,
 * then description and categories as context): "send an email" reaches GMAIL__SEND_EMAIL, and "in
 * gmail" lifts Gmail's functions.
 */
export function functionDocument(fn: FunctionText, app: AppText): SearchDocument {
  const local = functionLocalName(fn.name);
  const fields: Record<SearchField, string> = {
    name: local,
    app: appTitle(app),
    tags: fn.tags.join(' '),
    description: fn.description,
    params: parameterNames(fn.parameters).join(' '),
    context: `${app.categories.join(' ')} ${app.description}`,
    operation: operationText(fn.protocol_data),
  };
  const embedding = `${app.display_name} ${local.toLowerCase()}: ${fn.description}`;
  return finish('function', fn.name, fn.app_name, fields, embedding);
}

/**
 * The action a REST method performs on its path, in the words catalogues name actions by: GET on a
 * collection lists it, GET on an item (the path ends with a parameter) gets it, POST creates, PUT and
 * PATCH update, DELETE deletes. Then the path's literal segments: GET /v1/voices → "list v1 voices".
 */
export function operationText(protocol: FunctionText['protocol_data']): string {
  const method = typeof protocol?.method === 'string' ? protocol.method.toUpperCase() : '';
  const path = typeof protocol?.path === 'string' ? protocol.path : '';
  if (!method || !path) {
    return '';
  }
  const segments = path.split(/[/?&=.]+/).filter(Boolean);
  const item = /^\{.*\}$/.test(segments[segments.length - 1] ?? '');
  const action = { GET: item ? 'get' : 'list', POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' }[
    method
  ];
  return [action ?? '', ...segments.filter((segment) => !segment.startsWith('{'))].join(' ').trim();
}

function finish(
  kind: SearchKind,
  name: string,
  appName: string,
  fields: Record<SearchField, string>,
  embeddingText: string,
): SearchDocument {
  const text_hash = createHash('sha256')
    .update(JSON.stringify([...SEARCH_FIELDS.map((field) => fields[field]), embeddingText]))
    .digest('hex');
  return { kind, name, app_name: appName, fields, embedding_text: embeddingText, text_hash };
}

/** The indexed terms of each field: names also under their glued word pairs. */
export function analyseFields(fields: Record<SearchField, string>): Record<SearchField, string[]> {
  const terms = {} as Record<SearchField, string[]>;
  for (const field of SEARCH_FIELDS) {
    const text = fields[field] ?? '';
    terms[field] = field === 'name' || field === 'app' ? nameStems(text) : stems(text);
  }
  return terms;
}

/** Names of the visible parameters an LLM fills (the REST sections path/query/body are skipped). */
export function parameterNames(schema: Record<string, unknown>, depth = 0): string[] {
  const out: string[] = [];
  const properties = schema.properties;
  if (depth > 3 || typeof properties !== 'object' || properties === null) {
    return out;
  }
  const visible = visibleNames(schema);
  for (const [key, child] of Object.entries(properties as Record<string, unknown>)) {
    if (visible && !visible.has(key)) {
      continue;
    }
    const section = depth === 0 && ['path', 'query', 'header', 'cookie', 'body'].includes(key);
    if (!section) {
      out.push(key);
    }
    if (typeof child === 'object' && child !== null) {
      out.push(...parameterNames(child as Record<string, unknown>, depth + 1));
    }
  }
  return out;
}
