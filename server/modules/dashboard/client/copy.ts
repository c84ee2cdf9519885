// "Copy" buttons of the settings pages (issue 35): each names, in data-copy, the element whose value or
// text it copies. The buttons stay hidden without script (the value is selectable by hand).

function announce(button: HTMLElement, text: string) {
  const old = button.textContent
  button.textContent = text
  setTimeout(() => (button.textContent = old), 2000)
}

for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  button.hidden = false
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy!)
    if (!source) return
    const value = source instanceof HTMLInputElement || source instanceof HTMLTextAreaElement ? source.value : source.textContent ?? ''
    try {
      await navigator.clipboard.writeText(value)
      announce(button, 'Copied')
    } catch {
      // No clipboard permission (an insecure origin): select the text so Ctrl+C copies it.
      if (source instanceof HTMLInputElement) source.select()
      else getSelection()?.selectAllChildren(source)
      announce(button, 'Press Ctrl+C')
    }
  })
}
