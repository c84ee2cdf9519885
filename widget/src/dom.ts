// The one DOM builder of the panel: an element with attributes (or `on*` handlers) and children.

export type Child = Node | string | false | null | undefined

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, unknown> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false || value === null) continue
    if (name.startsWith('on')) (element as unknown as Record<string, unknown>)[name] = value
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  element.append(...(children.filter(Boolean) as (Node | string)[]))
  return element
}
