import { afterAll } from '@jest/globals';
import { closeLeftovers } from './leftovers.js';

// After each spec file's own hooks: whatever they failed to close.
afterAll(closeLeftovers);
