import { Injectable } from '@nestjs/common';
import { NotFoundError, RedisKeys } from '@stageflow/contracts';
import type { Pipeline } from '@stageflow/pipeline';
import { Clock } from '../clock.adapter';
import type { PipelineEntry, PipelinesApi } from '../engine.api';
import { parseJson } from '../store/record.codec';
import { EngineRedis } from '../store/redis.adapter';

interface PipelineMeta {
  updatedAt: string;
  stages: number;
}

/**
 * Registered pipelines: the YAML as sent, by name (`RedisKeys.pipelines()`),
 * with metadata beside it (`RedisKeys.pipelineMeta()`). Runs never read these:
 * each run stores its own snapshot, so re-registering does not touch them.
 */
@Injectable()
export class PipelinesService implements PipelinesApi {
  constructor(
    private readonly redis: EngineRedis,
    private readonly keys: RedisKeys,
    private readonly clock: Clock,
  ) {}

  async register(pipeline: Pipeline, source: string): Promise<PipelineEntry> {
    const meta: PipelineMeta = { updatedAt: this.clock.iso(), stages: pipeline.stages.length };
    await this.redis.client
      .multi()
      .hset(this.keys.pipelines(), pipeline.name, source)
      .hset(this.keys.pipelineMeta(), pipeline.name, JSON.stringify(meta))
      .exec();
    return { name: pipeline.name, source, ...meta };
  }

  async list(): Promise<PipelineEntry[]> {
    const [sources, metas] = await Promise.all([
      this.redis.client.hgetall(this.keys.pipelines()),
      this.redis.client.hgetall(this.keys.pipelineMeta()),
    ]);
    return Object.keys(sources)
      .sort()
      .map((name) => entry(name, sources[name], metas[name]));
  }

  async get(name: string): Promise<PipelineEntry> {
    const [source, meta] = await Promise.all([
      this.redis.client.hget(this.keys.pipelines(), name),
      this.redis.client.hget(this.keys.pipelineMeta(), name),
    ]);
    if (source === null) {
      throw new NotFoundError('pipeline_not_found', `No pipeline named "${name}" is registered. Register it first.`);
    }
    return entry(name, source, meta ?? undefined);
  }
}

function entry(name: string, source: string, metaText: string | undefined): PipelineEntry {
  const meta = parseJson<PipelineMeta>(metaText, { updatedAt: new Date(0).toISOString(), stages: 0 });
  return { name, source, updatedAt: meta.updatedAt, stages: meta.stages };
}
