import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the app serves the portal's pages (docs/portal.md). */
export const PORTAL_PATH = '/portal';

/** The pages: plain HTML, CSS and ES modules, no build step; nest-cli.json's assets copy them next to this file in dist. */
export const PORTAL_WEB_ROOT = join(__dirname, 'web');

/**
 * Only the portal's own files run and are fetched: no inline script or style, no other origin, never in a frame.
 * form-action 'none': every form is sent by the page's script, never submitted as a navigation.
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The portal's files change with the server: revalidated each time (ETag and Last-Modified make that a 304). */
const PAGE_CACHE = 'no-cache';
/** The charting library changes only with an upgrade of its package. */
const VENDOR_CACHE = 'public, max-age=86400';

/** The headers of every answer under /portal (a missing file's 404 envelope too). */
function portalHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', PORTAL_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // An invite link carries its code in the query: no other site may learn it from a Referer.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  next();
}

let chartJsPath: string | null | undefined;

/**
 * Chart.js's browser build (UMD), beside the package's CommonJS entry: its exports map lists no path to it, so it is
 * found from the entry. Resolved on first use, so a missing package costs the chart, never the start of the API.
 */
function chartJs(): string | null {
  if (chartJsPath === undefined) {
    try {
      const candidate = join(dirname(require.resolve('chart.js')), 'chart.umd.js');
      chartJsPath = existsSync(candidate) ? candidate : null;
    } catch {
      chartJsPath = null;
    }
  }
  return chartJsPath;
}

function serveChartJs(req: Request, res: Response, next: NextFunction): void {
  const path = chartJs();
  if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path !== '/' || path === null) {
    next();
    return;
  }
  res.sendFile(path, { headers: { 'Cache-Control': VENDOR_CACHE } }, (error) => {
    if (error && !res.headersSent) {
      next();
    }
  });
}

/**
 * Serves the portal at /portal/ (GET and HEAD of its files only), before the API's routes: any other method or a
 * missing file goes on to them and is answered as any path no route serves (404 route_not_found, 405 …), so the
 * API's guards, envelope and limits under /api are what they were.
 */
export function mountPortal(app: NestExpressApplication): void {
  app.use(PORTAL_PATH, portalHeaders);
  app.use(`${PORTAL_PATH}/vendor/chart.umd.js`, serveChartJs);
  app.useStaticAssets(PORTAL_WEB_ROOT, {
    prefix: PORTAL_PATH,
    index: 'index.html',
    redirect: true,
    etag: true,
    lastModified: true,
    dotfiles: 'ignore',
    fallthrough: true,
    setHeaders: (res: Response) => {
      res.setHeader('Cache-Control', PAGE_CACHE);
    },
  });
}
