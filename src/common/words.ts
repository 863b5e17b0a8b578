/** A noun with its indefinite article, as a sentence says it: "a member", "an admin". */
export function withArticle(noun: string): string {
  return `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
}
