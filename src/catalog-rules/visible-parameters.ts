export type SchemaNode = Record<string, unknown>;

/** Keywords whose value is a list of subschemas that apply to the same instance as their parent. */
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;
type SubschemaList = (typeof SUBSCHEMA_LISTS)[number];

/** Where a subschema applies, relative to the instance its parent schema describes. */
export type SubschemaPlace =
  | { kind: 'property'; name: string }
  /** Every property of the instance not named in the parent's `properties`. */
  | { kind: 'additionalProperties' }
  /** Every element of the array (or, for tuple `items`, element `index`). */
  | { kind: 'items'; index?: number }
  /** The same instance: a branch of anyOf, oneOf or allOf. */
  | { kind: SubschemaList; index: number };

export interface Subschema {
  node: SchemaNode;
  /** JSON Pointer segments from the parent to this subschema, e.g. `properties/body`, `oneOf/1`. */
  pointer: string;
  place: SubschemaPlace;
}

/**
 * The one walker of the catalogue's parameter schemas: the direct subschemas of `node` that can
 * hold object nodes (and so `visible`), in `properties`, `items`, `additionalProperties` and the
 * anyOf/oneOf/allOf branches. The definition shown to an LLM, the filling of hidden defaults at
 * execution and the import's checks all recurse through this, so they agree on where `visible` counts.
 */
export function subschemas(node: SchemaNode): Subschema[] {
  const found: Subschema[] = [];
  if (isSchemaNode(node.properties)) {
    for (const [name, child] of Object.entries(node.properties)) {
      if (isSchemaNode(child)) {
        found.push({ node: child, pointer: `properties/${escapePointer(name)}`, place: { kind: 'property', name } });
      }
    }
  }
  if (Array.isArray(node.items)) {
    node.items.forEach((child, index) => {
      if (isSchemaNode(child)) {
        found.push({ node: child, pointer: `items/${index}`, place: { kind: 'items', index } });
      }
    });
  } else if (isSchemaNode(node.items)) {
    found.push({ node: node.items, pointer: 'items', place: { kind: 'items' } });
  }
  if (isSchemaNode(node.additionalProperties)) {
    found.push({
      node: node.additionalProperties,
      pointer: 'additionalProperties',
      place: { kind: 'additionalProperties' },
    });
  }
  for (const keyword of SUBSCHEMA_LISTS) {
    const branches = node[keyword];
    if (Array.isArray(branches)) {
      branches.forEach((child, index) => {
        if (isSchemaNode(child)) {
          found.push({ node: child, pointer: `${keyword}/${index}`, place: { kind: keyword, index } });
        }
      });
    }
  }
  return found;
}

/** The names `visible` lists on this node, or undefined when it has no `visible` (all are shown). */
export function visibleNames(node: SchemaNode): Set<string> | undefined {
  return Array.isArray(node.visible)
    ? new Set(node.visible.filter((name): name is string => typeof name === 'string'))
    : undefined;
}

/** Required properties of this node that the LLM is not shown: the service must fill them. */
export function hiddenRequired(node: SchemaNode): string[] {
  const shown = visibleNames(node);
  if (!shown || !Array.isArray(node.required)) {
    return [];
  }
  return node.required.filter((name): name is string => typeof name === 'string' && !shown.has(name));
}

/**
 * The part of a function's parameter schema an LLM is shown. The catalogue extends JSON Schema with
 * `visible` on object nodes: only the properties it lists are kept, `required` is trimmed to them,
 * and the `visible` keyword itself is removed, at every depth `subschemas` reaches.
 *
 * An object node without `visible` keeps all its properties: the real catalogue omits it on many
 * array-item objects whose fields are all meant for the LLM.
 *
 * Pure: the input is not modified; unchanged leaves may be shared with it.
 */
export function visibleParameters(schema: SchemaNode): SchemaNode {
  return visibleNode(schema);
}

function visibleNode(node: SchemaNode): SchemaNode {
  const out = mapSubschemas(node, visibleNode);
  delete out.visible;
  const shown = visibleNames(node);
  if (shown && isSchemaNode(out.properties)) {
    // Property names are keys here, not keywords, so a property called "visible" survives.
    out.properties = Object.fromEntries(Object.entries(out.properties).filter(([name]) => shown.has(name)));
  }
  if (shown && Array.isArray(node.required)) {
    out.required = node.required.filter((name) => typeof name === 'string' && shown.has(name));
  }
  return out;
}

/** A shallow copy of `node` with each of its subschemas replaced by `map(subschema)`. */
function mapSubschemas(node: SchemaNode, map: (child: SchemaNode) => SchemaNode): SchemaNode {
  const out: SchemaNode = { ...node };
  for (const { node: child, place } of subschemas(node)) {
    const mapped = map(child);
    switch (place.kind) {
      case 'property':
        out.properties = { ...(out.properties as SchemaNode), [place.name]: mapped };
        break;
      case 'additionalProperties':
        out.additionalProperties = mapped;
        break;
      case 'items':
        if (place.index === undefined) {
          out.items = mapped;
        } else {
          const items = [...(out.items as unknown[])];
          items[place.index] = mapped;
          out.items = items;
        }
        break;
      case 'anyOf':
      case 'oneOf':
      case 'allOf': {
        const branches = [...(out[place.kind] as unknown[])];
        branches[place.index] = mapped;
        out[place.kind] = branches;
      }
    }
  }
  return out;
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
