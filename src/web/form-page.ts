import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { setFormOrigin } from '../http/request-state.js';
import { getMetadataStorage } from 'class-validator';
import type { Request } from 'express';
import type { Observable } from 'rxjs';

export const FORM_PAGE = 'tessera:form-page';

/** A page path with its `:params` filled from the request. */
export function fillPage(template: string, req: Request): string {
  return template.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(String(req.params[name] ?? '')),
  );
}

const FIELDS = new WeakMap<object, readonly string[]>();

/** The fields the handler's form class declares (validated properties), read once per handler. */
export function formFieldsOf(context: ExecutionContext): readonly string[] {
  const handler = context.getHandler();
  let fields = FIELDS.get(handler);
  if (!fields) {
    const types = (Reflect.getMetadata(
      'design:paramtypes',
      context.getClass().prototype,
      handler.name,
    ) ?? []) as unknown[];
    const storage = getMetadataStorage();
    const names = types.flatMap((type) =>
      typeof type === 'function'
        ? storage
            .getTargetValidationMetadatas(type, '', true, false)
            .map((meta) => meta.propertyName)
        : [],
    );
    fields = [...new Set(names)];
    FIELDS.set(handler, fields);
  }
  return fields;
}

@Injectable()
export class FormPageInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const template = this.reflector.get<string>(FORM_PAGE, context.getHandler());
    setFormOrigin(req, { page: fillPage(template, req), fields: formFieldsOf(context) });
    return next.handle();
  }
}

/**
 * The page that holds this POST's form (`:params` filled from the request). When the input is
 * refused, the exception filter sends the person back there with the messages and their values.
 */
export const FormPage = (path: string) =>
  applyDecorators(SetMetadata(FORM_PAGE, path), UseInterceptors(FormPageInterceptor));

/**
 * The page each form's address belongs to: the path of every route with @FormPage, as Express
 * knows it (`/teams/:id/transfer`), to the page's path template (`/teams/:id`).
 */
export function formPagesOf(modules: ModulesContainer): Map<string, string> {
  const scanner = new MetadataScanner();
  const pages = new Map<string, string>();
  for (const wrapper of new DiscoveryService(modules).getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => object) | null;
    if (!type) continue;
    const base = String(Reflect.getMetadata(PATH_METADATA, type) ?? '');
    for (const name of scanner.getAllMethodNames(type.prototype)) {
      const handler = (type.prototype as Record<string, () => unknown>)[name];
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
      const page = Reflect.getMetadata(FORM_PAGE, handler) as string | undefined;
      if (path === undefined || page === undefined) continue;
      pages.set(
        `/${[base, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/'),
        page,
      );
    }
  }
  return pages;
}
