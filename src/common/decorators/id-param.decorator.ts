import { HttpStatus, Param, ParseIntPipe } from '@nestjs/common';

/** A numeric id from the path; anything else there names nothing, so it is a 404. */
export const IdParam = (name = 'id'): ParameterDecorator =>
  Param(name, new ParseIntPipe({ errorHttpStatusCode: HttpStatus.NOT_FOUND }));
