import { Param, type PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../errors/domain.error.js';

/** Only plain decimal ids: "0x3", "1e2" or "3abc" name nothing. */
class StrictIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
      throw new NotFoundError('page');
    }
    return Number(value);
  }
}

/** A numeric id from the path; anything else there names nothing, so it is a 404. */
export const IdParam = (name = 'id'): ParameterDecorator => Param(name, new StrictIdPipe());
