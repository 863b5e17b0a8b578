import { Module } from '@nestjs/common';
import { TeamController } from './team.controller.js';
import { UserController } from './user.controller.js';

@Module({ controllers: [UserController, TeamController] })
export class ApiV1Module {}
