import { EnvReader, integer } from './env-reader.js';

export interface TeamsConfig {
  /** How long an invitation's link works (TEAM_INVITATION_TTL_DAYS). */
  invitationTtlDays: number;
}

export function readTeamsConfig(r: EnvReader): TeamsConfig {
  return { invitationTtlDays: r.read('TEAM_INVITATION_TTL_DAYS', '7', integer(1, 90)) };
}
