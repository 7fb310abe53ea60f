import { SetMetadata } from '@nestjs/common';

export const ACCEPTS_YAML = 'stageflow:accepts-yaml';

export interface AcceptsYamlOptions {
  /**
   * Also read `text/plain`. Only for routes that change nothing: a page on any
   * site can POST text/plain without a CORS preflight.
   * @defaultValue false
   */
  plainText?: boolean;
}

/** The route also takes its body as raw YAML; it reaches the handler as `{ yaml: <text> }`. */
export const AcceptsYaml = (options: AcceptsYamlOptions = {}): MethodDecorator =>
  SetMetadata(ACCEPTS_YAML, { plainText: options.plainText ?? false });
