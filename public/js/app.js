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

// The recovery codes: Copy puts them on the clipboard one to a line; Print prints the page,
// whose print styles leave only the codes. Both need this script, so they show with it only.
for (const part of document.querySelectorAll('[data-script-only]')) part.hidden = false;
document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-copy-list]');
  if (!button) return;
  const list = document.getElementById(button.dataset.copyList);
  const status = document.querySelector('[data-copy-status]');
  const text = [...list.querySelectorAll('li')].map((item) => item.textContent.trim()).join('\n');
  try {
    await navigator.clipboard.writeText(`${text}\n`);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    window.getSelection().selectAllChildren(list);
    if (status) status.textContent = 'Press Ctrl+C (⌘C on a Mac) to copy the selected codes.';
  }
});
document.addEventListener('click', (event) => {
  if (event.target.closest('[data-print]')) window.print();
});

// A destructive form asks first (`data-confirm`); one that acts on a choice (`data-confirm-with`,
// a select's name) names what was chosen, and with nothing chosen goes straight to the server's
// refusal, which says what to choose.
function confirmationOf(form) {
  const message = form.dataset.confirm;
  const select = form.dataset.confirmWith && form.elements.namedItem(form.dataset.confirmWith);
  if (!message || !select) return message;
  if (!select.value) return undefined;
  return `${message}\n\n${select.labels[0]?.textContent.trim()}: ${select.selectedOptions[0].text}`;
}

// A form is sent once: a second press of Enter or a double click while the first is on its way
// would act twice (two tokens, one never shown). Its page shown again from the browser's history
// may send it again. Downloads are links and GET forms, which this leaves alone.
document.addEventListener('submit', (event) => {
  const form = event.target;
  const message = confirmationOf(form);
  if (message && !window.confirm(message)) {
    event.preventDefault();
    return;
  }
  // A passkey's form is sent by passkeys.js, once its ceremony is done; it keeps its own guard.
  if (form.method !== 'post' || form.dataset.passkey !== undefined) return;
  if (form.dataset.sending) {
    event.preventDefault();
    return;
  }
  form.dataset.sending = 'true';
  form.setAttribute('aria-busy', 'true');
});
window.addEventListener('pageshow', () => {
  for (const form of document.querySelectorAll('form[data-sending]')) {
    delete form.dataset.sending;
    form.removeAttribute('aria-busy');
  }
});

// A page that shows a secret once answers a POST: reloading it must not post the form again
// (and create another token). Replacing the history entry turns a reload into a plain GET, of
// the page the attribute names when the POST's own address has no page.
const shownOnce = document.querySelector('[data-shown-once]');
if (shownOnce) {
  window.history.replaceState(null, '', shownOnce.dataset.shownOnce || window.location.href);
}
// Any other page that answers a POST (a change to review before it is saved): Back to it
// shows the page it names instead of asking to send the form again.
const answersPost = document.querySelector('[data-answers-post]');
if (answersPost && !shownOnce)
  window.history.replaceState(null, '', answersPost.dataset.answersPost);

// A new token may live only as long as the team it will act in allows: each choice of "Acts in"
// names its maximum, and the expiries past it are taken off the list (the server refuses them
// all the same). Without this script the list is that of the first choice, the current team.
for (const acting of document.querySelectorAll('[data-acting-team]')) {
  const form = acting.form;
  const expiry = form.querySelector('[data-expiry-choice]');
  const date = form.querySelector('[data-expiry-date]');
  const hint = form.querySelector('[data-expiry-hint]');
  const update = () => {
    const chosen = acting.selectedOptions[0].dataset;
    const max = chosen.maxDays === '' ? Infinity : Number(chosen.maxDays);
    for (const option of expiry.options) {
      if (option.dataset.days === undefined) continue;
      const allowed =
        option.dataset.days === 'none' ? max === Infinity : Number(option.dataset.days) <= max;
      option.disabled = option.hidden = !allowed;
    }
    if (expiry.selectedOptions[0]?.disabled) expiry.value = chosen.defaultExpiry;
    date.max = chosen.lastDate;
    hint.textContent = chosen.hint;
    expiry.dispatchEvent(new Event('change'));
  };
  acting.addEventListener('change', update);
  update();
}

// Fields that matter for one choice of a select only (the expiry date for "On a date…", the
// warning for "Never"): shown for that choice. Without this script they are always shown.
for (const select of document.querySelectorAll('[data-expiry-choice]')) {
  const form = select.form;
  const update = () => {
    for (const part of form.querySelectorAll('[data-shown-for]')) {
      part.hidden = part.dataset.shownFor !== select.value;
    }
  };
  select.addEventListener('change', update);
  update();
}

// After the password is confirmed, the form that waited for it goes on as it was sent: the
// continue page submits it at once (without this script it takes one click).
const resume = document.querySelector('form[data-resume]');
if (resume) resume.requestSubmit();

// The header's menus (disclosures, which open by keyboard without this script): one open at a
// time, and Escape, a click elsewhere or the focus moving out of one closes them (Escape gives
// the focus back to the menu). Left open, a menu's panel would cover what the focus moves to.
const menus = [...document.querySelectorAll('.site-header details')];
for (const menu of menus) {
  menu.addEventListener('toggle', () => {
    if (menu.open) for (const other of menus) if (other !== menu) other.open = false;
  });
  menu.addEventListener('focusout', (event) => {
    if (menu.open && event.relatedTarget && !menu.contains(event.relatedTarget)) menu.open = false;
  });
}
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape') return;
  for (const menu of menus.filter((m) => m.open)) {
    menu.open = false;
    menu.querySelector('summary').focus();
  }
});
document.addEventListener('click', (event) => {
  for (const menu of menus) if (menu.open && !menu.contains(event.target)) menu.open = false;
});

// A form that came back with a mistake, low on a long page, would show it out of sight: its
// first wrong field takes the focus (and is scrolled to), its message read with it. A secret
// shown once takes it otherwise, beside its Copy button.
const firstWrong = document.querySelector('[aria-invalid="true"]');
const revealed = document.querySelector('[data-shown-once] input');
(firstWrong || revealed)?.focus();
