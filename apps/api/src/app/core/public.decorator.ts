import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'stageflow:public';

/** Marks a route that answers without the token or origin checks (only health: probes carry no secrets). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
