import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { SecurityNotices } from './security-notices.js';

/** Mail that tells a person about changes to how their account is reached. */
@Module({
  imports: [UsersModule],
  providers: [SecurityNotices],
  exports: [SecurityNotices],
})
export class SecurityNoticesModule {}
