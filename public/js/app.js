// Copy buttons and confirmations for Tessera's pages. Loaded as a file: the pages allow no inline script.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-copy-target]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copyTarget);
  const status = document.querySelector('[data-copy-status]');
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    if (status) status.textContent = 'Press Ctrl+C (⌘C on a Mac) to copy the selected token.';
  }
});

document.addEventListener('submit', (event) => {
  const message = event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});

// A page that shows a secret once answers a POST: reloading it must not post the form again
// (and create another token). Replacing the history entry turns a reload into a plain GET, of
// the page the attribute names when the POST's own address has no page.
const shownOnce = document.querySelector('[data-shown-once]');
if (shownOnce) {
  window.history.replaceState(null, '', shownOnce.dataset.shownOnce || window.location.href);
}
