import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
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

@Injectable()
export class FormPageInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const template = this.reflector.get<string>(FORM_PAGE, context.getHandler());
    req.formPage = fillPage(template, req);
    req.formFields = this.fieldsOf(context);
    return next.handle();
  }

  /** The fields the handler's form class declares (validated properties), once per handler. */
  private fieldsOf(context: ExecutionContext): readonly string[] {
    const handler = context.getHandler();
    let fields = this.fields.get(handler);
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
      this.fields.set(handler, fields);
    }
    return fields;
  }

  private readonly fields = new WeakMap<object, readonly string[]>();
}

/**
 * The page that holds this POST's form (`:params` filled from the request). When the input is
 * refused, the exception filter sends the person back there with the messages and their values.
 */
export const FormPage = (path: string) =>
  applyDecorators(SetMetadata(FORM_PAGE, path), UseInterceptors(FormPageInterceptor));
