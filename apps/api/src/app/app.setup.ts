import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { ApiConfig } from '@stageflow/config';
import { AccessPolicy } from './core/access.policy';
import { installBodyParsers } from './core/body-parsers';
import { installConsole } from './core/console-static';
import { ApiWsAdapter } from './events/api-ws.adapter';

export const GLOBAL_PREFIX = 'api';

/**
 * Everything about the app that is not a module: prefix, the console, body
 * parsers, the WebSocket adapter, API docs. Shared by main.ts and the tests, so tests run
 * the same request path production does. Create the app with `bodyParser: false`.
 */
export function configureApp(app: NestExpressApplication, config: ApiConfig): void {
  app.disable('x-powered-by');
  app.setGlobalPrefix(GLOBAL_PREFIX);
  if (config.consoleDir) installConsole(app, config.consoleDir);
  installBodyParsers(app, config.bodyLimitBytes);
  app.useWebSocketAdapter(new ApiWsAdapter(app, app.get(AccessPolicy)));
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Stageflow api')
      .setDescription('Pipelines, runs, gates and run events. Errors are `{code, message, details?}`; see docs/api.md.')
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'STAGEFLOW_API_TOKEN, when one is configured.' })
      .build(),
  );
  SwaggerModule.setup(`${GLOBAL_PREFIX}/docs`, app, document, { jsonDocumentUrl: `${GLOBAL_PREFIX}/docs-json` });
}
