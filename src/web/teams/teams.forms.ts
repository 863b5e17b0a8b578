import {
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { ABILITY_NAME } from '../../config/abilities.config.js';
import { Transform } from 'class-transformer';
import { ToInteger } from '../../common/validation/transforms.js';
import { ASSIGNABLE_ROLES, type AssignableRole } from '../../teams/dto/add-member.dto.js';
import type { PolicyInput } from '../../teams/team-policies.service.js';

export class ChangeRoleForm {
  @IsIn(ASSIGNABLE_ROLES, { message: `Role must be one of ${ASSIGNABLE_ROLES.join(', ')}.` })
  role!: AssignableRole;
}

export class TransferTeamForm {
  @ToInteger()
  @Min(1, { message: 'Choose the member who will own the team.' })
  @IsInt({ message: 'Choose the member who will own the team.' })
  user_id!: number;
}

export class SwitchTeamForm {
  @ToInteger()
  @Min(1, { message: 'Choose a team.' })
  @IsInt({ message: 'Choose a team.' })
  team_id!: number;

  /** The page the switch was made from, to go back to; anything but a page of ours is ignored. */
  @IsOptional()
  @IsString()
  return_to?: string;
}

/** The most a team may allow a token to live: ten years, as the deployment's own limit. */
export const MAX_POLICY_LIFETIME_DAYS = 3650;

/** The policy form's abilities: ticked boxes (one arrives as a string), or none at all. */
export class TeamAbilitiesFields {
  /** Sent by the form with the list, so that no box ticked means none, not "left as it is". */
  @IsOptional()
  @IsIn(['on'])
  abilities_listed?: 'on';

  @Transform(({ value }) => (typeof value === 'string' ? [value] : value))
  @IsOptional()
  @Matches(ABILITY_NAME, { each: true, message: 'Choose abilities from the list.' })
  @IsString({ each: true, message: 'Choose abilities from the list.' })
  @IsArray({ message: 'Choose abilities from the list.' })
  allowed_abilities?: string[];
}

/** The team's policy, as its page's form sends it (owner only). */
export class TeamPolicyForm extends TeamAbilitiesFields {
  /** A ticked checkbox sends `on`; an unticked one sends nothing. */
  @IsOptional()
  @IsIn(['on'], { message: 'Tick the box, or leave it empty.' })
  require_two_factor?: 'on';

  /** Empty for no maximum, or 1 to 3650 days. */
  @Transform(({ value }) =>
    value === undefined || (typeof value === 'string' && value.trim() === '')
      ? null
      : typeof value === 'string' && /^\s*\d{1,6}\s*$/.test(value)
        ? Number(value)
        : value,
  )
  @ValidateIf((form: TeamPolicyForm) => form.token_max_lifetime_days !== null)
  @Max(MAX_POLICY_LIFETIME_DAYS, {
    message: `The maximum lifetime is at most ${MAX_POLICY_LIFETIME_DAYS} days.`,
  })
  @Min(1, { message: 'The maximum lifetime is at least 1 day.' })
  @IsInt({ message: 'Give the maximum lifetime as a whole number of days, or leave it empty.' })
  token_max_lifetime_days: number | null = null;
}

/** What the policy form asks the team's policy to be (abilities not listed: kept as they are). */
export function policyInputOf(form: TeamPolicyForm): PolicyInput {
  return {
    requireTwoFactor: form.require_two_factor === 'on',
    tokenMaxLifetimeDays: form.token_max_lifetime_days,
    allowedAbilities: form.abilities_listed === 'on' ? (form.allowed_abilities ?? []) : undefined,
  };
}
