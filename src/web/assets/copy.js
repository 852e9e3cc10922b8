// The staff pages' Copy buttons (a feed's new link and the message to send with it), allowed by its hash in the
// page's CSP (web/assets.ts, layouts.ts). Progressive: without script the field is plain selectable text and its
// button stays hidden; with it, the button copies the field through the clipboard API and says so beside it, and
// says the truth when the browser refused (the text is then selected, to copy by hand).
// Type-checked through JSDoc (npm run check: tsc -p src/web/assets).
{
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (
    document.querySelectorAll('button[data-copy]')
  );
  for (const button of buttons) {
    const id = button.getAttribute('data-copy') ?? '';
    const field = /** @type {HTMLInputElement | HTMLTextAreaElement | null} */ (document.getElementById(id));
    const said = document.getElementById(`${id}-copied`);
    if (!field || !said) continue;
    const byHand =
      'Not copied: the text is selected, copy it with your device (Ctrl+C, or press and hold, then Copy)';
    button.hidden = false;
    button.addEventListener('click', () => {
      field.select();
      said.textContent = '';
      if (!navigator.clipboard) {
        said.textContent = byHand;
        return;
      }
      navigator.clipboard.writeText(field.value).then(
        () => {
          said.textContent = 'Copied';
        },
        () => {
          said.textContent = byHand;
        },
      );
    });
  }
}
