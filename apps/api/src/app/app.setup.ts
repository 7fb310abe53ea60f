import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { ApiConfig } from '@stageflow/config';
import { AccessPolicy } from './core/access.policy';
import { installBodyParsers } from './core/body-parsers';
import { installConsole } from './core/console-static';
import { ApiWsAdapter } from './events/api-ws.adapter';
import { LiveViewProxy } from './live-view/live-view.proxy';

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
  const policy = app.get(AccessPolicy);
  const liveView = new LiveViewProxy(config.liveViewUrl, policy, new Logger('LiveViewProxy'));
  app.useWebSocketAdapter(new ApiWsAdapter(app, policy, [liveView]));
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Stageflow api')
      .setDescription(
        'Pipelines, runs, gates, run events and live-view tickets. Errors are `{code, message, details?}`; see docs/api.md. ' +
          'The live view WebSocket (`/api/runs/{run}/stages/{stage}/live-view?ticket=`) is described in docs/live-view.md.',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'STAGEFLOW_API_TOKEN, when one is configured.' })
      .build(),
  );
  SwaggerModule.setup(`${GLOBAL_PREFIX}/docs`, app, document, { jsonDocumentUrl: `${GLOBAL_PREFIX}/docs-json` });
}
