/**
 * The metadata keys and route parameter kinds Nest's public decorators (HttpCode, Req, Body, Query) write, which the
 * guards and interceptors read back. @nestjs/common keeps them in files it does not export (constants, enums/
 * route-paramtypes.enum), so they are spelled here; nest-metadata.spec.ts applies the public decorators and fails if
 * an upgrade changes one.
 */
export const NEST_METADATA = {
  /** HttpCode(status): the status on the handler. */
  httpCode: '__httpCode__',
  /** @Req(), @Body(), @Query(…): on the controller class, under the method's name, keyed `${kind}:${index}`. */
  routeArguments: '__routeArguments__',
} as const;

/** The kind before the colon of a route argument's key (RouteParamtypes in @nestjs/common). */
export const ROUTE_PARAM_KIND = { request: 0, body: 3, query: 4 } as const;
