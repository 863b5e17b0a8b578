import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { ConfigError, loadConfig } from './config/config.js';
import { logLevelsUpTo } from './config/log-levels.js';

async function bootstrap(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger: logLevelsUpTo(config.app.logLevel),
  });
  if (config.web.sessionSecretGenerated) {
    Logger.warn(
      'SESSION_SECRET is not set: using a random one, so sign-ins end when the process restarts and instances cannot share sessions',
      'Tessera',
    );
  }
  configureApp(app);
  await app.listen(config.app.port, config.app.host);
  Logger.log(`Listening on ${await app.getUrl()}`, 'Tessera');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
