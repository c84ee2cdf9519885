import { describe, expect, test } from 'bun:test'
import { escapeHtml, html, trustedHtml } from '../../server/lib/html.ts'

describe('happy', () => {
  test('interpolations are escaped; html output nests unescaped; arrays join', () => {
    const items = ['<a>', 'b&c']
    const out = html`<ul>${items.map((item) => html`<li title="${item}">${item}</li>`)}</ul>`
    expect(out.value).toBe('<ul><li title="&lt;a&gt;">&lt;a&gt;</li><li title="b&amp;c">b&amp;c</li></ul>')
  })

  test('null, undefined and booleans render nothing; numbers render as text', () => {
    const flag = false
    expect(html`${null}${undefined}${flag && html`<b>x</b>`}${true}${0}${42}`.value).toBe('042')
  })

  test('trustedHtml passes markup through', () => {
    expect(html`<div>${trustedHtml('<p>ok</p>')}</div>`.value).toBe('<div><p>ok</p></div>')
  })
})

describe('security', () => {
  test('quotes are escaped, so a value cannot leave its attribute', () => {
    expect(html`<a href="${'" onmouseover="alert(1)'}" title='${"' x='1"}'>`.value).toBe(`<a href="&quot; onmouseover=&quot;alert(1)" title='&#39; x=&#39;1'>`)
    expect(escapeHtml(`<script>&"'`)).toBe('&lt;script&gt;&amp;&quot;&#39;')
  })

  test('a string that looks like html output is still escaped', () => {
    const fake = { value: '<script>' } as unknown as string
    expect(html`${fake}`.value).toBe('[object Object]')
  })
})
