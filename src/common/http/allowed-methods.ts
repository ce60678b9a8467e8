import type { Request } from 'express';

interface RouteLayer {
  route?: { _methods(): string[] };
  match(path: string): unknown;
}

/**
 * The methods some route serves at this request's path (GET brings HEAD), read from Express' router: an empty list
 * means no route has the path at all (404), a non-empty one that only the method is wrong (405 with `Allow`).
 */
export function allowedMethods(req: Request): string[] {
  const stack = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) {
      continue;
    }
    let matches = false;
    try {
      matches = Boolean(layer.match(req.path));
    } catch {
      // a malformed percent-escape in the path: no route serves it
    }
    if (matches) {
      layer.route._methods().forEach((method) => methods.add(method));
    }
  }
  return [...methods].sort();
}
