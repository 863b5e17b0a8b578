import type { Team } from './team.entity.js';

/** The team as the API shows it: exactly these three fields. */
export interface TeamSummary {
  id: number;
  name: string;
  slug: string;
}

export function toTeamSummary(team: Pick<Team, 'id' | 'name' | 'slug'>): TeamSummary {
  return { id: team.id, name: team.name, slug: team.slug };
}
