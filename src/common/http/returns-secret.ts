import { Header } from '@nestjs/common';

/**
 * On an operation whose answer carries a secret shown once (a token, a signing secret): `Cache-Control: no-store`,
 * so no browser, proxy or client cache keeps a copy of it.
 */
export const ReturnsSecret = (): MethodDecorator => Header('Cache-Control', 'no-store');
