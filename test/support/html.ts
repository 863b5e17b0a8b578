/** The text a person reads on a page: tags dropped, entities decoded, white space folded. */
export function visibleText(html: string): string {
  return attributeText(
    html
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
      // A line-break opportunity inside a word is no space.
      .replace(/<wbr>/gi, '')
      .replace(/<[^>]+>/g, ' '),
  )
    .replace(/\s+/g, ' ')
    .trim();
}

/** The CSRF token of a page's form, as a browser would submit it (`page` names it in errors). */
export function csrfTokenIn(html: string, page = 'the page'): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF field on ${page}`);
  return match[1];
}

/** A new API token's value in the page that shows it, once, after creating or regenerating it. */
export const NEW_TOKEN_VALUE = /value="(tsr_[0-9A-Za-z]{36})"/;

/** The value of the new API token a page shows once. */
export function newTokenValueIn(html: string): string {
  const value = NEW_TOKEN_VALUE.exec(html)?.[1];
  if (!value) throw new Error('the page shows no new token');
  return value;
}

/**
 * The new API token the tokens page shows once: its value, and its id from the first row of the
 * page's list (active tokens are listed newest first).
 */
export function newTokenIn(html: string): { value: string; id: number } {
  const value = newTokenValueIn(html);
  const id = /data-token-id="(\d+)"/.exec(html)?.[1];
  if (!id) throw new Error('the page lists no token');
  return { value, id: Number(id) };
}

/** A select's options, as a browser offers them: value, whether chosen, whether disabled. */
function optionsOf(
  html: string,
  name: string,
): { value: string; selected: boolean; disabled: boolean }[] {
  const select = new RegExp(`<select[^>]*\\bname="${name}"[^>]*>([\\s\\S]*?)</select>`).exec(html);
  if (!select) throw new Error(`the page has no select named ${name}`);
  return [...select[1].matchAll(/<option value="([^"]*)"([^>]*)>/g)].map(([, value, rest]) => ({
    value: attributeText(value),
    selected: /\bselected\b/.test(rest),
    disabled: /\bdisabled\b/.test(rest),
  }));
}

/** The values of a select's options a person can choose (not disabled), in the page's order. */
export function enabledOptionsIn(html: string, name: string): string[] {
  return optionsOf(html, name)
    .filter((o) => !o.disabled)
    .map((o) => o.value);
}

/** The value of a select's chosen option (the first when none is marked, as browsers do). */
export function selectedOptionIn(html: string, name: string): string | undefined {
  const options = optionsOf(html, name);
  return (options.find((o) => o.selected) ?? options[0])?.value;
}

/** The session id inside an express-session cookie (`tessera.sid=s%3A<id>.<signature>`). */
export function sessionIdOf(cookie: string): string {
  return decodeURIComponent(cookie.split('=')[1]).slice(2).split('.')[0];
}

/** The hashed URL a page links for one of public/'s files: `/assets/app.3f9a1c2b.css` for app.css. */
export function assetUrl(html: string, file: string): string {
  const dot = file.lastIndexOf('.');
  const [name, extension] = [file.slice(0, dot), file.slice(dot)];
  const match = new RegExp(`"(/assets/${name}\\.[0-9a-f]{8}\\${extension})"`).exec(html);
  if (!match) throw new Error(`the page links no ${file}`);
  return match[1];
}

/** Text as the browser reads it: the entities Handlebars writes, decoded. */
function attributeText(value: string): string {
  return value
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x3D;/g, '=')
    .replace(/&#x60;/g, '`')
    .replace(/&amp;/g, '&');
}

/**
 * The form the page's script submits at once (`data-resume`): where it posts and its fields as a
 * browser would send them (a name that repeats sends each value).
 */
export function resumedFormIn(html: string): { action: string; fields: [string, string][] } {
  const form = /<form method="post" action="([^"]*)" data-resume>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error('the page has no form to go on with');
  const fields = [...form[2].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map(
    ([, name, value]) => [attributeText(name), attributeText(value)] as [string, string],
  );
  return { action: attributeText(form[1]), fields };
}
