import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { PageContext } from './page-context.js';

/**
 * The page edge, as `ApiV1Module` is the API's: what every page request goes through once the
 * session and CSRF are read (configureApp mounts it on the pages' branch only).
 */
@Module({
  imports: [TeamsModule],
  providers: [PageContext],
  exports: [PageContext],
})
export class WebModule {}
