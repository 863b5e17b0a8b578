import { IsOptional, IsString } from 'class-validator';

export class ResendForm {
  /** The page the form was on, when it is not the API tokens page. */
  @IsOptional()
  @IsString()
  return_to?: string;
}
