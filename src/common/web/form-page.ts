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
import type { Request } from 'express';
import type { Observable } from 'rxjs';

const FORM_PAGE = 'tessera:form-page';

@Injectable()
export class FormPageInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const template = this.reflector.get<string>(FORM_PAGE, context.getHandler());
    req.formPage = template.replace(/:(\w+)/g, (_, name: string) =>
      encodeURIComponent(String(req.params[name] ?? '')),
    );
    return next.handle();
  }
}

/**
 * The page that holds this POST's form (`:params` filled from the request). When the input is
 * refused, the exception filter sends the person back there with the messages and their values.
 */
export const FormPage = (path: string) =>
  applyDecorators(SetMetadata(FORM_PAGE, path), UseInterceptors(FormPageInterceptor));
