// The console's own script, served at /console/assets/console.js (a file of the server's origin,
// so the Content-Security-Policy's `script-src 'self'` takes it; no inline handler anywhere).
// It does one thing: a form with `data-confirm` (a destructive action, dangers.ts) asks its
// question in a modal dialog first. "Cancel" (or Escape) sends nothing; the confirming button
// sends the form with `_confirmed=1`. Without this script the same form reaches the server
// unconfirmed and the server answers with a confirmation page instead of acting.
export const CONSOLE_JS = `'use strict';
(function () {
  var dialog, ask, yes, pending;
  function build() {
    dialog = document.createElement('dialog');
    dialog.id = 'confirm-dialog';
    dialog.className = 'confirm';
    dialog.setAttribute('aria-labelledby', 'confirm-dialog-ask');
    var form = document.createElement('form');
    form.method = 'dialog';
    ask = document.createElement('p');
    ask.id = 'confirm-dialog-ask';
    var buttons = document.createElement('div');
    buttons.className = 'buttons';
    var no = document.createElement('button');
    no.id = 'confirm-dialog-no'; no.className = 'secondary'; no.value = 'no'; no.textContent = 'Cancel';
    no.autofocus = true;
    yes = document.createElement('button');
    yes.id = 'confirm-dialog-yes'; yes.className = 'danger'; yes.value = 'yes';
    buttons.append(no, yes);
    form.append(ask, buttons);
    dialog.append(form);
    document.body.append(dialog);
    dialog.addEventListener('close', function () {
      var target = pending;
      pending = undefined;
      if (!target || dialog.returnValue !== 'yes') return;
      var field = document.createElement('input');
      field.type = 'hidden'; field.name = '_confirmed'; field.value = '1';
      target.append(field);
      // submit() fires no submit event (so no second question) and reads the fields at once:
      // the field goes again, so the form asks again if the page comes back from history.
      target.submit();
      field.remove();
    });
  }
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-confirm')) return;
    e.preventDefault();
    if (!dialog) build();
    if (dialog.open) return;
    ask.textContent = form.getAttribute('data-confirm');
    yes.textContent = form.getAttribute('data-confirm-yes') || 'Confirm';
    pending = form;
    dialog.returnValue = '';
    dialog.showModal();
  });
})();
`;
