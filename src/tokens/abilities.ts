import { ValidationError } from '../common/errors/domain.error.js';
import type { AbilityCatalog } from '../config/abilities.config.js';

/** An ability's name, `resource:action`: the deployment's catalog says which exist. */
export type Ability = string;

/**
 * The abilities a new or edited token gets: those asked for, in the catalog's order, or the
 * catalog's defaults when none are named. A name the catalog does not offer is refused.
 */
export function chooseAbilities(catalog: AbilityCatalog, asked: readonly string[] | undefined) {
  if (asked === undefined) return catalog.defaults();
  const unknown = catalog.retired(asked);
  if (unknown.length > 0) {
    throw new ValidationError({
      abilities: `This deployment offers no ability ${unknown.map((a) => `"${a}"`).join(', ')}; it offers ${catalog.names().join(', ')}.`,
    });
  }
  return catalog.offered(asked);
}
