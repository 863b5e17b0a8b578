import { readFileSync } from 'node:fs';
import type { EnvReader } from './env-reader.js';

/** `resource:action`: lower-case letters, digits, `_` and `-` on each side, 40 at most each. */
export const ABILITY_NAME = /^[a-z][a-z0-9_-]{0,39}:[a-z][a-z0-9_-]{0,39}$/;
/** Entries a deployment's file may add; past that the file is refused. */
export const MAX_DEPLOYMENT_ABILITIES = 100;
const DESCRIPTION_MAX = 300;

/** One ability a token may be given. */
export interface AbilityDefinition {
  name: string;
  /** What it lets a token do, in a line, for the pages, the CLI and the API description. */
  description: string;
  /** Ticked on the new-token form, and given when a token is made without naming abilities. */
  default: boolean;
  /**
   * What it reaches is a member's of the team (some of it an owner's or admin's): a service
   * account, never a member of its team, could not use it, so its tokens are not given it.
   */
  membersOnly?: true;
  /** What it reaches is the team's owners' and admins' alone: a plain member could not use it. */
  managersOnly?: true;
}

/** Tessera's own abilities; a deployment adds its own in ABILITIES_FILE. */
export const BUILT_IN_ABILITIES: readonly AbilityDefinition[] = [
  {
    name: 'user:read',
    description:
      'Read your profile (name and email) and your teams: GET /api/v1/user/profile, GET /api/v1/user/teams.',
    default: true,
  },
  {
    name: 'team:read',
    description: 'Read the team the token acts in (name and slug): GET /api/v1/team.',
    default: true,
  },
  {
    name: 'members:read',
    description:
      "Read the team's members and its pending invitations: GET /api/v1/team/members, GET /api/v1/team/invitations.",
    default: false,
    membersOnly: true,
  },
  {
    name: 'members:write',
    description:
      'Invite people, withdraw invitations, change roles and remove members, as an owner or admin may on the team page.',
    default: false,
    membersOnly: true,
  },
  {
    name: 'tokens:read',
    description:
      "Read the team's token inventory, names and metadata only (owners and admins): GET /api/v1/team/tokens.",
    default: false,
    membersOnly: true,
    managersOnly: true,
  },
  {
    name: 'audit:read',
    description: "Read the team's audit log (owners and admins): GET /api/v1/team/audit-log.",
    default: false,
    membersOnly: true,
    managersOnly: true,
  },
  {
    name: 'tokens:introspect',
    description:
      'Check a token presented to another service of the team: whether it is active in the team, whose it is and what it may do (RFC 7662): POST /api/v1/introspect.',
    default: false,
  },
];

/**
 * The abilities this deployment offers: Tessera's own, then those of ABILITIES_FILE, in that
 * order. A token may hold a name that is no longer here (the file changed): it is not refused
 * for it, and it grants nothing, since every route names an ability of the catalog.
 */
export class AbilityCatalog {
  private readonly byName: Map<string, AbilityDefinition>;

  constructor(readonly entries: readonly AbilityDefinition[]) {
    this.byName = new Map(entries.map((entry) => [entry.name, entry]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get(name: string): AbilityDefinition | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return this.entries.map((entry) => entry.name);
  }

  /** Those a token gets when it is made without naming its abilities. */
  defaults(): string[] {
    return this.entries.filter((entry) => entry.default).map((entry) => entry.name);
  }

  /** The names among `held` that the catalog offers, in the catalog's order. */
  offered(held: readonly string[]): string[] {
    return this.entries.filter((entry) => held.includes(entry.name)).map((entry) => entry.name);
  }

  /** The catalog's entries a team's policy allows tokens (all of them when it sets no limit). */
  allowedBy(allowed: readonly string[] | null): AbilityDefinition[] {
    return this.entries.filter((entry) => !allowed || allowed.includes(entry.name));
  }

  /** Those a team's policy (`allowed`, null for all) lets a service account's tokens have. */
  allowedForServiceAccountsBy(allowed: readonly string[] | null): AbilityDefinition[] {
    return this.allowedBy(allowed).filter((entry) => !entry.membersOnly);
  }

  /** The names among `names` that only a member's token can use. */
  membersOnly(names: readonly string[]): string[] {
    return names.filter((name) => this.byName.get(name)?.membersOnly);
  }

  /** The names among `names` that only a team's owners and admins can use. */
  managersOnly(names: readonly string[]): string[] {
    return names.filter((name) => this.byName.get(name)?.managersOnly);
  }

  /** The names among `held` that the catalog no longer offers. */
  retired(held: readonly string[]): string[] {
    return held.filter((name) => !this.byName.has(name));
  }
}

/** ABILITIES_FILE: a JSON array of `{"name", "description", "default"}`; every problem named. */
export function readAbilitiesConfig(r: EnvReader): AbilityCatalog {
  const path = r.env.ABILITIES_FILE?.trim();
  if (!path) return new AbilityCatalog(BUILT_IN_ABILITIES);
  const problem = (message: string) =>
    r.problems.push(`ABILITIES_FILE=${JSON.stringify(path)}: ${message}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem(
      code === 'ENOENT'
        ? 'there is no such file'
        : code
          ? `cannot be read (${code})`
          : `is not JSON (${(error as Error).message})`,
    );
    return new AbilityCatalog(BUILT_IN_ABILITIES);
  }
  const { entries, problems } = parseAbilities(parsed);
  for (const message of problems) problem(message);
  return new AbilityCatalog([...BUILT_IN_ABILITIES, ...entries]);
}

/** The deployment's entries, and what is wrong with any of them (each entry named). */
export function parseAbilities(parsed: unknown): {
  entries: AbilityDefinition[];
  problems: string[];
} {
  const problems: string[] = [];
  if (!Array.isArray(parsed)) {
    return {
      entries: [],
      problems: ['must be a JSON array of {"name", "description", "default"}'],
    };
  }
  if (parsed.length > MAX_DEPLOYMENT_ABILITIES) {
    problems.push(`has ${parsed.length} entries; at most ${MAX_DEPLOYMENT_ABILITIES} are taken`);
  }
  const seen = new Set(BUILT_IN_ABILITIES.map((a) => a.name));
  const entries: AbilityDefinition[] = [];
  parsed.slice(0, MAX_DEPLOYMENT_ABILITIES).forEach((value: unknown, index) => {
    const entry = value as Record<string, unknown> | null;
    const named =
      typeof entry?.name === 'string'
        ? `entry ${index + 1} ("${entry.name}")`
        : `entry ${index + 1}`;
    const wrong = entryProblem(entry, seen);
    if (wrong) {
      problems.push(`${named} ${wrong}`);
      return;
    }
    seen.add(entry!.name as string);
    entries.push({
      name: entry!.name as string,
      description: (entry!.description as string).trim(),
      default: entry!.default === true,
    });
  });
  return { entries, problems };
}

function entryProblem(entry: Record<string, unknown> | null, seen: Set<string>): string | null {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return 'must be an object with "name", "description" and "default"';
  }
  const unknown = Object.keys(entry).filter((k) => !['name', 'description', 'default'].includes(k));
  if (unknown.length > 0) return `has fields it may not: ${unknown.join(', ')}`;
  if (typeof entry.name !== 'string' || !ABILITY_NAME.test(entry.name)) {
    return 'needs a "name" of the form resource:action (lower-case letters, digits, "_" and "-")';
  }
  if (seen.has(entry.name)) {
    return BUILT_IN_ABILITIES.some((a) => a.name === entry.name)
      ? "names one of Tessera's own abilities"
      : 'names an ability listed before it';
  }
  if (
    typeof entry.description !== 'string' ||
    entry.description.trim() === '' ||
    entry.description.length > DESCRIPTION_MAX
  ) {
    return `needs a "description" of 1 to ${DESCRIPTION_MAX} characters`;
  }
  if (entry.default !== undefined && typeof entry.default !== 'boolean') {
    return 'has a "default" that is not true or false';
  }
  return null;
}
