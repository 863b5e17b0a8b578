/**
 * Who asks for a change: a signed-in user, or the operator at the command line, who may manage
 * any team but still cannot break the domain's rules.
 */
export type Actor = Person | 'operator';

/** A person acting for themselves: what they do happens to their own account. */
export interface Person {
  userId: number;
}

export const OPERATOR: Actor = 'operator';
