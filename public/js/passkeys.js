// Passkeys on Tessera's pages, with @simplewebauthn/browser (served by the app as
// js/webauthn-browser.js). Every passkey button sits in a [data-passkey-only] block that stays
// hidden where the browser cannot use passkeys; the rest of each page works without script.
(() => {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;
  for (const block of document.querySelectorAll('[data-passkey-only]')) block.hidden = false;
  for (const note of document.querySelectorAll('[data-passkey-unsupported]')) note.hidden = true;

  const say = (form, message) => {
    const error = form.querySelector('[data-passkey-error]');
    error.textContent = message;
    error.hidden = !message;
  };

  // The name field is marked as wrong, and read with the message, while it is empty.
  const markName = (name, error, wrong) => {
    const described = (name.getAttribute('aria-describedby') || '')
      .split(' ')
      .filter((id) => id && id !== error.id);
    if (wrong) described.push(error.id);
    name.setAttribute('aria-describedby', described.join(' '));
    name.setAttribute('aria-invalid', String(wrong));
  };

  document.addEventListener('submit', async (event) => {
    const form = event.target.closest('form[data-passkey]');
    if (!form) return;
    event.preventDefault();
    if (form.dataset.busy) return;
    const name = form.querySelector('[name="name"]');
    if (name) {
      const unnamed = !name.value.trim();
      markName(name, form.querySelector('[data-passkey-error]'), unnamed);
      if (unnamed) {
        say(form, 'Give the passkey a name first.');
        name.focus();
        return;
      }
    }
    form.dataset.busy = 'true';
    say(form, '');
    try {
      const answer = await fetch(form.dataset.options, {
        method: 'POST',
        headers: { Accept: 'application/json' },
        body: new URLSearchParams({ _csrf: form.querySelector('[name="_csrf"]').value }),
        credentials: 'same-origin',
      });
      if (!answer.ok) {
        say(
          form,
          answer.status === 429
            ? 'Too many tries: wait a while, then try again.'
            : 'The passkey could not be started: reload the page and try again.',
        );
        return;
      }
      const options = await answer.json();
      if (options.confirmPassword) {
        window.location.assign(options.confirmPassword);
        return;
      }
      const credential =
        form.dataset.passkey === 'register'
          ? await webauthn.startRegistration({ optionsJSON: options })
          : await webauthn.startAuthentication({ optionsJSON: options });
      form.querySelector('[name="credential"]').value = JSON.stringify(credential);
      // The form itself, as without this script: its answer is a page.
      HTMLFormElement.prototype.submit.call(form);
    } catch (error) {
      say(
        form,
        error && error.name === 'NotAllowedError'
          ? 'No passkey was used. Try again when you are ready.'
          : 'The passkey did not answer. Try again, or use another way.',
      );
    } finally {
      delete form.dataset.busy;
    }
  });
})();
