/**
 * How an imported OpenAPI operation puts its input on the wire, stored with the function at import
 * (`protocol_data.openapi`) so that execution reads it instead of a document. Only what differs from
 * the defaults of OpenAPI is written, and `v` versions the shape: re-importing a document whose
 * rules changed shows the function as updated.
 *
 * ACI-format functions have no such block and keep their format's rules (arrays as repeated keys,
 * objects as JSON text, form bodies flat).
 */
export interface OpenApiWire {
  v: 1;
  /** Non-default parameter rules, by location then parameter name. */
  parameters?: Partial<Record<ParameterSection, Record<string, ParameterRule>>>;
  /** The body's media type and encodings; absent when the operation takes no body. */
  body?: BodyRule;
}

export type ParameterSection = 'path' | 'query' | 'header' | 'cookie';

export type ParameterStyle =
  | 'simple'
  | 'label'
  | 'matrix'
  | 'form'
  | 'spaceDelimited'
  | 'pipeDelimited'
  | 'deepObject'
  /** Swagger 2.0's `collectionFormat: tsv`, which OpenAPI 3 has no style for. */
  | 'tabDelimited';

export interface ParameterRule {
  style?: ParameterStyle;
  explode?: boolean;
  allow_reserved?: true;
  /** A parameter described by `content`: its value is sent as text of this media type (JSON text for JSON). */
  content_type?: string;
}

export interface BodyRule {
  /** The media type sent, chosen at import: JSON first, then form, multipart, text, binary. */
  media_type: string;
  /** Per-property encoding of a form or multipart body (OpenAPI's Encoding Object). */
  encoding?: Record<string, ParameterRule>;
  /** Multipart properties that are files, given as `{ base64, filename?, media_type? }` (or arrays of them). */
  files?: string[];
  /**
   * A body in a binary media type whose schema says `format: byte`: base64 is what goes on the wire,
   * so the text given is sent as it is, not decoded.
   */
  base64_text?: true;
}

export const OPENAPI_WIRE_VERSION = 1;

/** The default style and explode of a location (OpenAPI 3.1, Parameter Object). */
export function defaultStyle(section: ParameterSection): ParameterStyle {
  return section === 'path' || section === 'header' ? 'simple' : 'form';
}

export function defaultExplode(style: ParameterStyle): boolean {
  return style === 'form';
}

/** Media types whose content is text, sent as the string given (others that are not JSON, form or multipart are bytes). */
export function isTextual(type: string): boolean {
  return /^text\/|^application\/([^;]*\+)?(xml|yaml|x-yaml|jwt|text|javascript|x-ndjson|sql|graphql)\b/i.test(type);
}
