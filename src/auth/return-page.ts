/** The longest page address worth coming back to. */
const RETURN_TO_MAX = 2_000;

/**
 * A page to go on to after signing in: only a page of this site, and not one of the sign-in
 * pages themselves.
 */
export function isReturnPage(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path.length <= RETURN_TO_MAX &&
    /^\/(?![/\\])[^\s]*$/.test(path) &&
    !/^\/(login|register|logout)\b/.test(path)
  );
}
