import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Events } from './events.js';

/** The application's one event dispatcher. */
@Global()
@Module({ imports: [DiscoveryModule], providers: [Events], exports: [Events] })
export class EventsModule {}
