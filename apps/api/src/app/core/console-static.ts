import type { NestExpressApplication } from '@nestjs/platform-express';
import { StageflowError } from '@stageflow/contracts';
import { resolve } from 'node:path';
import type { HttpRequest, HttpResponse, NextFunction } from './http-request';

type SendFile = (path: string, options: { root: string; dotfiles: 'deny' }, done: (err?: FileError) => void) => void;
type FileError = Error & { status?: number; statusCode?: number; code?: string };

/**
 * Serves the built console at `/`: its files, and `index.html` for client-side
 * routes (`/runs/abc`). Never anything under `/api`.
 *
 * Not `ServeStaticModule`: it needs `express` as a direct dependency, and its
 * error middleware turns every error on an excluded route into a 404, so a
 * malformed JSON body to `/api/runs` would answer `route_not_found`.
 */
export function installConsole(app: NestExpressApplication, dir: string): void {
  const root = resolve(dir);
  app.use((req: HttpRequest, res: HttpResponse & { sendFile: SendFile }, next: NextFunction) => {
    const path = req.path ?? '/';
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path === '/api' || path.startsWith('/api/')) return next();
    res.sendFile(path === '/' ? 'index.html' : path, { root, dotfiles: 'deny' }, (err) => {
      if (!err) return;
      const status = err.status ?? err.statusCode;
      const missing = status === 404 || err.code === 'ENOENT' || err.code === 'EISDIR';
      // A missing file with an extension is a missing asset, not a route of the console.
      if (missing && !/\.[^/]*$/.test(path)) {
        res.sendFile('index.html', { root, dotfiles: 'deny' }, (indexErr) => next(indexErr && consoleMissing(root)));
        return;
      }
      if (missing) return next();
      next(status === 403 || status === 400 ? new StageflowError('forbidden', 'That path cannot be served.', 403) : err);
    });
  });
}

function consoleMissing(root: string): StageflowError {
  return new StageflowError(
    'console_missing',
    `The console is not built: ${root}/index.html does not exist. Build it, or unset STAGEFLOW_CONSOLE_DIR.`,
    503,
  );
}
