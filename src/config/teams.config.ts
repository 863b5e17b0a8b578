import { EnvReader, integer } from './env-reader.js';

export interface TeamsConfig {
  /** How long an invitation's link works (TEAM_INVITATION_TTL_DAYS). */
  invitationTtlDays: number;
  /** How many service accounts one team may have (SERVICE_ACCOUNTS_PER_TEAM; 0: none). */
  serviceAccountsPerTeam: number;
}

export function readTeamsConfig(r: EnvReader): TeamsConfig {
  return {
    invitationTtlDays: r.read('TEAM_INVITATION_TTL_DAYS', '7', integer(1, 90)),
    serviceAccountsPerTeam: r.read('SERVICE_ACCOUNTS_PER_TEAM', '20', integer(0, 10_000)),
  };
}
