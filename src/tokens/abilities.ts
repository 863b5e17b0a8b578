/** An ability's name, `resource:action`: the deployment's catalog says which exist. */
export type Ability = string;
