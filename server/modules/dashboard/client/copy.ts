// "Copy" buttons (`data-copy="<input id>"`): copy the named field's value to the clipboard and say so.
// Without script the field stays selectable and readonly, so nothing depends on this.

document.addEventListener('click', (event) => {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-copy]')
  if (!button) return
  const field = document.getElementById(button.dataset.copy ?? '') as HTMLInputElement | null
  if (!field) return
  field.select()
  void navigator.clipboard?.writeText(field.value).then(() => {
    button.textContent = 'Copied'
    setTimeout(() => { button.textContent = 'Copy' }, 2000)
  }, () => {})
})
