import './inplace.ts'
// The dashboard's keyboard layer (bundled by esbuild, server/modules/dashboard/script.ts). It only
// moves focus and presses the page's own controls: every action stays a plain form without it.
// Inbox: j/k move between rows, Enter opens, x selects, s/a/l jump to the bulk status, owner and label
// controls, / focuses Search, ? lists the keys. Post page: s status, a assign, l labels, m merge.

import './copy.ts'

const HELP = 'Keys: j/k move · Enter open · x select · s status · a assign · l label · m merge · / search · ? this list'

const rows = () => Array.from(document.querySelectorAll<HTMLTableRowElement>('table.inbox tbody tr'))
let current = -1

function mark(index: number) {
  const list = rows()
  if (list.length === 0) return
  current = Math.max(0, Math.min(list.length - 1, index))
  list.forEach((row, i) => row.classList.toggle('current', i === current))
  list[current]!.querySelector<HTMLAnchorElement>('a')?.focus()
}

function focus(selector: string) {
  const element = document.querySelector<HTMLElement>(selector)
  if (!element) return false
  element.focus()
  return true
}

function announce(text: string) {
  let live = document.getElementById('dash-live')
  if (!live) {
    live = document.createElement('p')
    live.id = 'dash-live'
    live.className = 'sr'
    live.setAttribute('aria-live', 'polite')
    document.body.append(live)
  }
  live.textContent = text
}

document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return
  const target = event.target as HTMLElement
  if (target.closest('input, textarea, select, [contenteditable]')) {
    if (event.key === 'Escape') target.blur()
    return
  }
  const row = rows()[current]
  const handled = (() => {
    switch (event.key) {
      case 'j': mark(current + 1); return true
      case 'k': mark(current - 1); return true
      case 'Enter': if (row && document.activeElement === document.body) { row.querySelector('a')?.click(); return true } return false
      case 'x': {
        const box = row?.querySelector<HTMLInputElement>('input[type=checkbox]')
        if (!box) return false
        box.checked = !box.checked
        announce(`${box.checked ? 'Selected' : 'Unselected'}: ${row!.querySelector('a')?.textContent ?? ''}`)
        return true
      }
      case 's': return focus('#b-status') || focus('#p-status')
      case 'a': return focus('#b-owner') || focus('#p-owner')
      case 'l': return focus('#b-label') || focus('input[name=labels]')
      case 'm': return focus('#p-merge')
      case '/': return focus('#q')
      case '?': announce(HELP); alertHelp(); return true
      default: return false
    }
  })()
  if (handled) event.preventDefault()
})

function alertHelp() {
  let help = document.getElementById('dash-keys')
  if (!help) {
    help = document.createElement('div')
    help.id = 'dash-keys'
    help.setAttribute('role', 'note')
    help.className = 'notice'
    help.tabIndex = -1
    help.textContent = HELP
    document.querySelector('main')?.prepend(help)
  }
  help.focus()
}
