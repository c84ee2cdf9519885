// In-place updates: with script, a dashboard form is sent with fetch and the page's <main> is replaced
// by the <main> of the page the server answers (after its redirect), so a status change, a reply or a
// filter updates the page without a reload and keeps the scroll and the header. Without script the
// same forms post and redirect as usual: this only changes how the answer reaches the screen.

const parser = new DOMParser()

async function swap(response: Response, push: boolean) {
  const type = response.headers.get('content-type') ?? ''
  // Not a dashboard page (signed out: the sign-in page; an error of another kind): let the browser show it.
  if (!type.includes('text/html') || !new URL(response.url).pathname.startsWith('/dashboard')) return false
  const next = parser.parseFromString(await response.text(), 'text/html')
  const main = next.querySelector('main')
  const current = document.querySelector('main')
  if (!main || !current) return false
  current.replaceWith(main)
  document.title = next.title
  if (push) history.pushState(null, '', response.url)
  else history.replaceState(null, '', response.url)
  // Where a keyboard user continues: the error, else the notice, else the heading.
  const target = main.querySelector<HTMLElement>('[role=alert], [role=status], h1')
  if (target) {
    target.tabIndex = -1
    target.focus()
  }
  return true
}

document.addEventListener('submit', async (event) => {
  const form = event.target as HTMLFormElement
  if (!form.closest('main') || form.dataset.reload !== undefined) return
  event.preventDefault()
  const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null
  const data = new URLSearchParams(new FormData(form, submitter) as unknown as Record<string, string>)
  const get = form.method.toLowerCase() === 'get'
  const url = get ? `${form.action.split('?')[0]}?${data}` : form.action
  form.setAttribute('aria-busy', 'true')
  try {
    const response = await fetch(url, get ? { credentials: 'same-origin' } : { method: 'POST', body: data, credentials: 'same-origin' })
    if (!(await swap(response, get || response.redirected))) location.assign(response.url)
  } catch {
    form.submit()
  } finally {
    form.removeAttribute('aria-busy')
  }
})

window.addEventListener('popstate', async () => {
  const response = await fetch(location.href, { credentials: 'same-origin' }).catch(() => null)
  if (!response || !(await swap(response, false))) location.reload()
})
