import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { PrintableText, Trim, VisibleText } from '../../common/validation/transforms.js';

export const SERVICE_ACCOUNT_NAME_MAX = 100;
export const SERVICE_ACCOUNT_DESCRIPTION_MAX = 500;

/** A new service account, as the team's page (and the command line) gives it. */
export class CreateServiceAccountForm {
  @Trim()
  @VisibleText('Name')
  @MaxLength(SERVICE_ACCOUNT_NAME_MAX, {
    message: `Name can be at most ${SERVICE_ACCOUNT_NAME_MAX} characters.`,
  })
  @IsNotEmpty({ message: 'Give the service account a name.' })
  @IsString({ message: 'Give the service account a name.' })
  name!: string;

  /** What it is for: optional, shown on its page. */
  @IsOptional()
  @Trim()
  @PrintableText('The description')
  @MaxLength(SERVICE_ACCOUNT_DESCRIPTION_MAX, {
    message: `The description is at most ${SERVICE_ACCOUNT_DESCRIPTION_MAX} characters.`,
  })
  @IsString({ message: 'The description must be text.' })
  description?: string;
}
