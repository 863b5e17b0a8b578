import { InitialSchema1763798400000 } from './1763798400000-initial-schema.js';

/** Every migration, oldest first. Listed by class so the build needs no file globbing. */
export const MIGRATIONS = [InitialSchema1763798400000];
