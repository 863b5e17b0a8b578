// The floor of Tessera's own stack: NestJS on Express as its documentation shows it, with one
// controller, one guard that looks the token up (the same prepared query as the others, through
// mysql2 or better-sqlite3) and nothing else: no logging, no limits, no metrics, no pipes.
// Plain JavaScript, so Nest's decorators are applied as functions.
import 'reflect-metadata';
import {
  Controller,
  Get,
  Header,
  Injectable,
  Module,
  Req,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { port, profileLookup, sha256, timestamp, verdict } from './common.mjs';

const lookup = await profileLookup();

class BearerGuard {
  async canActivate(context) {
    const req = context.switchToHttp().getRequest();
    const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new UnauthorizedException('missing_token');
    const row = await lookup(sha256(match[1]));
    const code = verdict(row);
    if (code) throw new UnauthorizedException(code);
    req.user = row;
    return true;
  }
}
Injectable()(BearerGuard);

class UserController {
  profile(req) {
    const row = req.user;
    return {
      success: true,
      data: { id: row.user_id, name: row.user_name, email: row.user_email },
      version: 'v1',
      timestamp: timestamp(),
    };
  }
}
const profile = Object.getOwnPropertyDescriptor(UserController.prototype, 'profile');
Req()(UserController.prototype, 'profile', 0);
Header('Cache-Control', 'no-store')(UserController.prototype, 'profile', profile);
Get('profile')(UserController.prototype, 'profile', profile);
UseGuards(BearerGuard)(UserController);
Controller('api/v1/user')(UserController);

class AppModule {}
Module({ controllers: [UserController], providers: [BearerGuard] })(AppModule);

const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false });
await app.listen(port, '127.0.0.1');
console.log(`listening on ${port}`);
