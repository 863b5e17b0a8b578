/** An invitation to a team, as the team's page lists it. */
export interface PendingInvitation {
  id: number;
  email: string;
  role: string;
  expiresAt: Date;
}

/**
 * The team page's view of its invitations, provided by the invitations feature (which builds on
 * teams, so teams reaches it through this port rather than importing it).
 */
export abstract class PendingInvitations {
  abstract forTeam(teamId: number): Promise<PendingInvitation[]>;
}
