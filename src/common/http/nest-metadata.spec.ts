import 'reflect-metadata';
import { Body, HttpCode, Query, Req } from '@nestjs/common';
import { NEST_METADATA, ROUTE_PARAM_KIND } from './nest-metadata';

describe('NEST_METADATA', () => {
  class Probe {
    @HttpCode(204)
    route(@Req() _req: unknown, @Body() _body: unknown, @Query('name') _name: string): void {}
  }

  it('names the key the public HttpCode decorator writes', () => {
    const route = Object.getOwnPropertyDescriptor(Probe.prototype, 'route')!.value as object;
    expect(Reflect.getMetadata(NEST_METADATA.httpCode, route)).toBe(204);
  });

  it('names the key and the kinds the public Req, Body and Query decorators write', () => {
    const args = Reflect.getMetadata(NEST_METADATA.routeArguments, Probe, 'route') as Record<string, unknown>;
    expect(Object.keys(args).sort()).toEqual(
      [`${ROUTE_PARAM_KIND.request}:0`, `${ROUTE_PARAM_KIND.body}:1`, `${ROUTE_PARAM_KIND.query}:2`].sort(),
    );
    expect(args[`${ROUTE_PARAM_KIND.query}:2`]).toMatchObject({ data: 'name' });
  });
});
