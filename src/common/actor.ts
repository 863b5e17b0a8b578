/**
 * Who asks for a change: a signed-in user, or the operator at the command line, who may manage
 * any team but still cannot break the domain's rules.
 */
export type Actor = { userId: number } | 'operator';

export const OPERATOR: Actor = 'operator';
