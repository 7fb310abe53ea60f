import { Injectable } from '@nestjs/common';

/** Time, behind an adapter so tests can fix it. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
  iso(): string {
    return this.now().toISOString();
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}
