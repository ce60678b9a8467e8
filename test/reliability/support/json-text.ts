/**
 * A JSON document as a tree that can say what `JSON.stringify` cannot: keys given twice, `__proto__` as an own key,
 * and numbers written as raw text (`1e309`, 2^53 + 1, forty digits). Hostile bodies are built as these trees and
 * serialized by `toJsonText`, so what is sent is exactly the text meant.
 */
export type JsonNode =
  | { kind: 'raw'; text: string }
  | { kind: 'object'; entries: Array<[string, JsonNode]> }
  | { kind: 'array'; items: JsonNode[] };

/** A step into a tree: a key of an object or an index of an array. */
export type PathStep = string | number;

export function raw(text: string): JsonNode {
  return { kind: 'raw', text };
}

/** The tree of a plain JSON value (own enumerable keys, in order). */
export function fromValue(value: unknown): JsonNode {
  if (Array.isArray(value)) {
    return { kind: 'array', items: value.map(fromValue) };
  }
  if (value !== null && typeof value === 'object') {
    return { kind: 'object', entries: Object.entries(value).map(([key, inner]) => [key, fromValue(inner)]) };
  }
  return raw(JSON.stringify(value) ?? 'null');
}

/** The JSON text of a tree; strings are escaped by JSON.stringify (lone surrogates become `\udXXX` escapes). */
export function toJsonText(node: JsonNode): string {
  switch (node.kind) {
    case 'raw':
      return node.text;
    case 'array':
      return `[${node.items.map(toJsonText).join(',')}]`;
    case 'object':
      return `{${node.entries.map(([key, inner]) => `${JSON.stringify(key)}:${toJsonText(inner)}`).join(',')}}`;
  }
}

/** Every path to a value in the tree (the root is `[]`), objects and arrays included. */
export function allPaths(node: JsonNode, prefix: PathStep[] = []): PathStep[][] {
  const here = [prefix];
  if (node.kind === 'object') {
    return here.concat(node.entries.flatMap(([key, inner]) => allPaths(inner, [...prefix, key])));
  }
  if (node.kind === 'array') {
    return here.concat(node.items.flatMap((inner, index) => allPaths(inner, [...prefix, index])));
  }
  return here;
}

/** Paths whose value is an object (where keys can be added), the root first. */
export function objectPaths(node: JsonNode): PathStep[][] {
  return allPaths(node).filter((path) => at(node, path)?.kind === 'object');
}

export function at(node: JsonNode, path: PathStep[]): JsonNode | undefined {
  let current: JsonNode | undefined = node;
  for (const step of path) {
    if (current?.kind === 'object') {
      current = current.entries.find(([key]) => key === step)?.[1];
    } else if (current?.kind === 'array' && typeof step === 'number') {
      current = current.items[step];
    } else {
      return undefined;
    }
  }
  return current;
}

/** A copy of the tree with the value at `path` replaced by `change(old)`; the tree itself is never modified. */
export function update(node: JsonNode, path: PathStep[], change: (old: JsonNode) => JsonNode): JsonNode {
  if (path.length === 0) {
    return change(node);
  }
  const [step, ...rest] = path;
  if (node.kind === 'object') {
    return {
      kind: 'object',
      entries: node.entries.map(([key, inner]) => [key, key === step ? update(inner, rest, change) : inner]),
    };
  }
  if (node.kind === 'array') {
    return {
      kind: 'array',
      items: node.items.map((inner, i) => (i === step ? update(inner, rest, change) : inner)),
    };
  }
  return node;
}

/** A copy with the key at the end of `path` removed from its object. */
export function remove(node: JsonNode, path: PathStep[]): JsonNode {
  const parent = path.slice(0, -1);
  const last = path[path.length - 1];
  return update(node, parent, (old) =>
    old.kind === 'object' ? { kind: 'object', entries: old.entries.filter(([key]) => key !== last) } : old,
  );
}

/** A copy with `entries` appended to the object at `path` (a key already there is then given twice). */
export function addEntries(node: JsonNode, path: PathStep[], entries: Array<[string, JsonNode]>): JsonNode {
  return update(node, path, (old) =>
    old.kind === 'object' ? { kind: 'object', entries: [...old.entries, ...entries] } : old,
  );
}

/** `inner` wrapped in `depth` objects or arrays: `{"a":{"a":…}}` or `[[…]]`. */
export function nested(depth: number, inner: JsonNode, shape: 'object' | 'array'): JsonNode {
  let node = inner;
  for (let i = 0; i < depth; i++) {
    node = shape === 'object' ? { kind: 'object', entries: [['a', node]] } : { kind: 'array', items: [node] };
  }
  return node;
}

/** Deeply nested JSON as text, built without recursion (a tree 100,000 deep would overflow `toJsonText`). */
export function nestedText(depth: number, inner: string, shape: 'object' | 'array'): string {
  return shape === 'object'
    ? '{"a":'.repeat(depth) + inner + '}'.repeat(depth)
    : '['.repeat(depth) + inner + ']'.repeat(depth);
}

/** A readable name of a path: `lines[0].quantity`, or `(root)`. */
export function pathName(path: PathStep[]): string {
  if (path.length === 0) {
    return '(root)';
  }
  return path
    .map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join('');
}
