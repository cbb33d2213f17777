import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { stableJson } from '../../libs/common/src/index.js';
import { APP_FILE_SCHEMA, FUNCTIONS_FILE_SCHEMA } from './catalog.schemas.js';
import { type CatalogProblem, catalogAjv, parameterSchemaProblems } from './parameter-schema-rules.js';

export type { CatalogProblem };

export interface AppFile {
  name: string;
  display_name: string;
  provider: string;
  version: string;
  description: string;
  logo: string | null;
  categories: string[];
  visibility: 'public' | 'private';
  active: boolean;
  security_schemes: Record<string, Record<string, unknown>>;
  default_security_credentials_by_scheme: Record<string, Record<string, unknown>>;
}

export interface FunctionFile {
  name: string;
  description: string;
  tags: string[];
  visibility: 'public' | 'private';
  active: boolean;
  protocol: 'rest' | 'connector' | 'mcp';
  protocol_data: Record<string, unknown>;
  parameters: Record<string, unknown>;
  response?: Record<string, unknown>;
  security_schemes?: string[];
}

/**
 * A checked function as the writer takes it: its name, its content hash, and the columns the catalogue
 * stores as one JSON object in text. Text, not objects: Microsoft Graph's 11,310 functions took 290 MB
 * of the import's main heap as objects (119 MB as JSON), and writing them through the ORM left 210 MB
 * more of garbage before a collection; DocuSign's 399 (158 MB as JSON) took the import alone to 1.9–2.0 GB
 * of RSS, 1.25 GB as text (2026-11-27). The text goes to the database as it is.
 */
export interface FunctionRecord {
  name: string;
  hash: string;
  /** name, app_name, description, tags, visibility, active, protocol, protocol_data, parameters, response, content_hash. */
  row: string;
}

export interface LoadedApp {
  folder: string;
  app: AppFile;
  functions: FunctionRecord[];
  appHash: string;
  /** Placeholders with no value: the setting they stand for stays unset. */
  unfilled: { file: string; path: string; placeholder: string }[];
}

export interface LoadResult {
  apps: LoadedApp[];
  problems: CatalogProblem[];
}

const PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

const validateAppFile = catalogAjv.compile(APP_FILE_SCHEMA);
const validateFunctionsFile = catalogAjv.compile(FUNCTIONS_FILE_SCHEMA);
const validateFunctionFile = catalogAjv.compile(FUNCTIONS_FILE_SCHEMA.items);

/** The app folders a PATH stands for: itself when it holds app.json, else its sub-folders that do. */
export function appFolders(path: string): string[] {
  const root = resolve(path);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new Error(`${path} is not a folder`);
  }
  if (existsSync(join(root, 'app.json'))) {
    return [root];
  }
  return readdirSync(root)
    .sort()
    .map((entry) => join(root, entry))
    .filter((dir) => statSync(dir).isDirectory() && existsSync(join(dir, 'app.json')));
}

/**
 * Reads and checks app folders completely before anything is written: every problem found is
 * reported with its file, JSON path and reason.
 */
export function loadAppFolders(folders: string[], secrets: Record<string, string | undefined>): LoadResult {
  const apps: LoadedApp[] = [];
  const problems: CatalogProblem[] = [];
  const seenApps = new Map<string, string>();
  const seenFunctions = new Map<string, string>();
  for (const folder of folders) {
    const appPath = join(folder, 'app.json');
    const functionsPath = join(folder, 'functions.json');
    const appRaw = readJson(appPath, problems);
    const functionsRaw = existsSync(functionsPath) ? readJson(functionsPath, problems) : [];
    if (appRaw === undefined || functionsRaw === undefined) {
      continue;
    }
    const checked = checkAppRecords(
      appRaw,
      functionsRaw,
      { folder, appFile: appPath, functionsFile: functionsPath },
      secrets,
    );
    problems.push(...checked.problems);
    if (!checked.loaded) {
      continue;
    }
    const { app, functions } = checked.loaded;
    const other = seenApps.get(app.name);
    if (other) {
      problems.push({ file: appPath, path: '/name', reason: `app ${app.name} is also defined in ${other}` });
    }
    seenApps.set(app.name, appPath);
    functions.forEach((fn, index) => {
      const previous = seenFunctions.get(fn.name);
      if (previous) {
        problems.push({
          file: functionsPath,
          path: `/${index}/name`,
          reason: `${fn.name} is also defined in ${previous}`,
        });
      }
      seenFunctions.set(fn.name, functionsPath);
    });
    apps.push(checked.loaded);
  }
  return { apps, problems };
}

/**
 * Checks one app record and its functions (from app.json and functions.json, or generated from an
 * OpenAPI document) by the catalogue's rules, fills its placeholders and hashes it for the writer.
 */
export function checkAppRecords(
  appRaw: unknown,
  functionsRaw: unknown,
  files: { folder: string; appFile: string; functionsFile: string },
  secrets: Record<string, string | undefined>,
): { loaded?: LoadedApp; problems: CatalogProblem[] } {
  const problems: CatalogProblem[] = [];
  if (!validateAppFile(appRaw)) {
    problems.push(...ajvProblems(files.appFile, validateAppFile.errors));
  }
  if (!validateFunctionsFile(functionsRaw)) {
    problems.push(...ajvProblems(files.functionsFile, validateFunctionsFile.errors));
  }
  if (problems.length > 0) {
    return { problems };
  }
  const checked = checkedApp(appRaw, files, secrets);
  const functions = functionsRaw as FunctionFile[];
  functions.forEach((fn, index) => {
    problems.push(...functionProblems(checked.app.name, fn, files.functionsFile, `/${index}`));
  });
  return {
    problems,
    loaded: { ...checked, functions: functions.map((fn) => functionRecord(checked.app.name, fn)) },
  };
}

/**
 * checkAppRecords for the app record alone, when its functions are checked one at a time as they
 * are made (checkFunctionRecord), then made records (functionRecord).
 */
export function checkAppRecord(
  appRaw: unknown,
  files: { folder: string; appFile: string },
  secrets: Record<string, string | undefined>,
): { checked?: Omit<LoadedApp, 'functions'>; problems: CatalogProblem[] } {
  if (!validateAppFile(appRaw)) {
    return { problems: ajvProblems(files.appFile, validateAppFile.errors) };
  }
  return { checked: checkedApp(appRaw, files, secrets), problems: [] };
}

/** checkAppRecords for the `index`th function of the app `appName` alone. */
export function checkFunctionRecord(appName: string, fn: FunctionFile, file: string, index: number): CatalogProblem[] {
  const at = `/${index}`;
  if (!validateFunctionFile(fn)) {
    return ajvProblems(file, validateFunctionFile.errors, at);
  }
  return functionProblems(appName, fn, file, at);
}

/** A checked app record, its placeholders filled, and its hash. */
function checkedApp(
  appRaw: unknown,
  files: { folder: string; appFile: string },
  secrets: Record<string, string | undefined>,
): Omit<LoadedApp, 'functions'> {
  const unfilled: LoadedApp['unfilled'] = [];
  const app = fillPlaceholders(appRaw, secrets, files.appFile, '', unfilled) as AppFile;
  return { folder: files.folder, app, appHash: contentHash(app), unfilled };
}

/** The catalogue's rules for a function beyond its file's JSON Schema; `at` is its path in the file. */
function functionProblems(appName: string, fn: FunctionFile, file: string, at: string): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  if (!fn.name.startsWith(`${appName}__`)) {
    problems.push({ file, path: `${at}/name`, reason: `must start with ${appName}__` });
  }
  problems.push(...parameterSchemaProblems(fn.parameters, fn.protocol, file, `${at}/parameters`));
  return problems;
}

/** A checked function of the app `appName` as the writer takes it. */
export function functionRecord(appName: string, fn: FunctionFile): FunctionRecord {
  const hash = contentHash(fn);
  const row = asciiJson({
    name: fn.name,
    app_name: appName,
    description: fn.description,
    tags: fn.tags,
    visibility: fn.visibility,
    active: fn.active,
    protocol: fn.protocol,
    protocol_data: fn.protocol_data,
    parameters: fn.parameters,
    response: fn.response ?? {},
    content_hash: hash,
  });
  return { name: fn.name, hash, row };
}

/**
 * JSON with every character past ASCII written as its \u escape: the same value, but V8 holds such a
 * string at one byte per character, where one character past Latin-1 makes it two (DocuSign's 399
 * functions, 158 MB of JSON, took 357 MB of the main heap as plain JSON text).
 */
function asciiJson(value: unknown): string {
  const escaped = JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  // The replacement keeps the two-byte form of the text it was made from: read back as Latin-1, it is one-byte.
  return Buffer.from(escaped, 'latin1').toString('latin1');
}

function readJson(file: string, problems: CatalogProblem[]): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    problems.push({ file, path: '', reason: 'cannot be read' });
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    problems.push({ file, path: '', reason: `is not valid JSON: ${(error as Error).message}` });
    return undefined;
  }
}

/** `at`: the checked value's path in its file. */
function ajvProblems(file: string, errors: ErrorObject[] | null | undefined, at = ''): CatalogProblem[] {
  return (errors ?? [])
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      let reason = error.message ?? 'is invalid';
      if (error.keyword === 'additionalProperties') {
        reason = `unknown key "${(error.params as { additionalProperty: string }).additionalProperty}"`;
      } else if (error.keyword === 'enum') {
        reason = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      }
      return { file, path: `${at}${error.instancePath}` || '/', reason };
    });
}

/** Replaces `{{ NAME }}` strings from `secrets`; a missing value becomes null and is reported. */
function fillPlaceholders(
  value: unknown,
  secrets: Record<string, string | undefined>,
  file: string,
  path: string,
  unfilled: LoadedApp['unfilled'],
): unknown {
  if (typeof value === 'string') {
    const match = PLACEHOLDER.exec(value.trim());
    if (!match) {
      return value;
    }
    const filled = secrets[match[1]];
    if (filled === undefined || filled === '') {
      unfilled.push({ file, path, placeholder: match[1] });
      return null;
    }
    return filled;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => fillPlaceholders(item, secrets, file, `${path}/${i}`, unfilled));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        fillPlaceholders(item, secrets, file, `${path}/${key}`, unfilled),
      ]),
    );
  }
  return value;
}

/** Stable across key order, so that an unchanged file re-imports as unchanged. */
export function contentHash(value: object): string {
  return createHash('sha256').update(stableJson(value)).digest('hex');
}
