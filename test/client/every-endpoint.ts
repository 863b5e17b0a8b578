import type { TesseraClient } from './tessera-client.js';

/** What an automation learns by calling every endpoint once, each answer as its type says. */
export interface EveryEndpoint {
  profileEmail: string;
  teams: { id: number; role: string }[];
  team: { id: number; slug: string };
  token: { abilities: string[]; catalog: string[] };
  members: { id: number; role: string }[];
  invitedId: number;
  invitations: string[];
  roleChanged: string;
  tokens: { name: string; person: string }[];
  events: string[];
  invitationWithdrawn: number;
  memberRemoved: number;
  /** Whether a made-up token introspects as active (it never does). */
  introspected: boolean | null;
}

/**
 * Calls every endpoint of the API once through the generated client: compiled under `strict`
 * (test/client/tsconfig.json), it fails to compile when the document and this program part;
 * the team API's e2e spec runs it against a server, so it fails when the server and the
 * document part. `memberId` is a member the token's person may manage.
 */
export async function callEveryEndpoint(
  client: TesseraClient,
  memberId: number,
  invite: string,
): Promise<EveryEndpoint> {
  const profile = await client.GET('/api/v1/user/profile');
  const teams = await client.GET('/api/v1/user/teams', { params: { query: { limit: 10 } } });
  const team = await client.GET('/api/v1/team');
  const token = await client.GET('/api/v1/token');
  const members = await client.GET('/api/v1/team/members', { params: { query: { limit: 100 } } });
  const invited = await client.POST('/api/v1/team/invitations', {
    body: { email: invite, role: 'member' },
    params: { header: { 'Idempotency-Key': `invite-${invite}` } },
  });
  const invitations = await client.GET('/api/v1/team/invitations');
  const role = await client.PATCH('/api/v1/team/members/{id}', {
    params: { path: { id: memberId } },
    body: { role: 'admin' },
  });
  const tokens = await client.GET('/api/v1/team/tokens');
  const events = await client.GET('/api/v1/team/audit-log', {
    params: { query: { kind: 'team' } },
  });
  const invitedId = invited.data?.data.id ?? 0;
  const withdrawn = await client.DELETE('/api/v1/team/invitations/{id}', {
    params: { path: { id: invitedId } },
  });
  const removed = await client.DELETE('/api/v1/team/members/{id}', {
    params: { path: { id: memberId } },
  });
  const introspection = await client.POST('/api/v1/introspect', {
    body: { token: 'tsr_made-up', required_abilities: 'team:read' },
  });
  return {
    profileEmail: profile.data?.data.email ?? '',
    teams: teams.data?.data.map((t) => ({ id: t.id, role: t.role })) ?? [],
    team: { id: team.data?.data.id ?? 0, slug: team.data?.data.slug ?? '' },
    token: {
      abilities: token.data?.data.abilities ?? [],
      catalog: token.data?.data.catalog.map((a) => a.name) ?? [],
    },
    members: members.data?.data.map((m) => ({ id: m.id, role: m.role })) ?? [],
    invitedId,
    invitations: invitations.data?.data.map((i) => i.email) ?? [],
    roleChanged: role.error ? role.error.error.code : 'changed',
    tokens: tokens.data?.data.map((t) => ({ name: t.name, person: t.person.email })) ?? [],
    events: events.data?.data.map((e) => e.event) ?? [],
    invitationWithdrawn: withdrawn.response.status,
    memberRemoved: removed.response.status,
    introspected: introspection.data?.active ?? null,
  };
}
