type SchemaNode = Record<string, unknown>;

/** Keywords whose value is a list of subschemas that may themselves hold object nodes. */
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;

/**
 * The part of a function's parameter schema an LLM is shown. The catalogue extends JSON Schema with
 * `visible` on object nodes: only the properties it lists are kept, `required` is trimmed to them,
 * and the `visible` keyword itself is removed, at every depth (nested objects, array `items`,
 * `additionalProperties` and anyOf/oneOf/allOf branches).
 *
 * An object node without `visible` keeps all its properties: the real catalogue omits it on many
 * array-item objects whose fields are all meant for the LLM.
 *
 * Pure: the input is not modified; unchanged leaves may be shared with it.
 */
export function visibleParameters(schema: SchemaNode): SchemaNode {
  return visibleNode(schema) as SchemaNode;
}

function visibleNode(node: unknown): unknown {
  if (!isSchemaNode(node)) {
    return node;
  }
  const out: SchemaNode = { ...node };
  delete out.visible;
  const shown = Array.isArray(node.visible)
    ? new Set(node.visible.filter((name): name is string => typeof name === 'string'))
    : undefined;

  if (isSchemaNode(node.properties)) {
    // Property names are keys here, not keywords, so a property called "visible" survives.
    out.properties = Object.fromEntries(
      Object.entries(node.properties)
        .filter(([name]) => !shown || shown.has(name))
        .map(([name, child]) => [name, visibleNode(child)]),
    );
  }
  if (shown && Array.isArray(node.required)) {
    out.required = node.required.filter((name) => typeof name === 'string' && shown.has(name));
  }
  if (node.items !== undefined) {
    out.items = Array.isArray(node.items) ? node.items.map(visibleNode) : visibleNode(node.items);
  }
  if (isSchemaNode(node.additionalProperties)) {
    out.additionalProperties = visibleNode(node.additionalProperties);
  }
  for (const keyword of SUBSCHEMA_LISTS) {
    const branches = node[keyword];
    if (Array.isArray(branches)) {
      out[keyword] = branches.map(visibleNode);
    }
  }
  return out;
}

function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
