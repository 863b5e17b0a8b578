import { Module } from '@nestjs/common';
import { TeamController } from './team.controller.js';
import { TokenController } from './token.controller.js';
import { UserController } from './user.controller.js';

@Module({ controllers: [UserController, TeamController, TokenController] })
export class ApiV1Module {}
