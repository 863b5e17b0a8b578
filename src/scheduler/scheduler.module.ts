import { Global, Module } from '@nestjs/common';
import { Scheduler } from './scheduler.js';

/** The application's one scheduler: every timer of every feature goes through it. */
@Global()
@Module({ providers: [Scheduler], exports: [Scheduler] })
export class SchedulerModule {}
