import { Module } from '@nestjs/common';
import { OneTimeLinksRepository } from './one-time-links.repository.js';
import { OneTimeLinks } from './one-time-links.service.js';

@Module({
  providers: [OneTimeLinksRepository, OneTimeLinks],
  exports: [OneTimeLinks],
})
export class OneTimeLinksModule {}
