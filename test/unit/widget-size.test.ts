import { describe, expect, test } from 'bun:test'
import { BUDGETS, buildWidget } from '../../widget/build.ts'

// The loader stays under 3 KiB gzipped and the panel under 30 KiB (README, Feedback widget); CI fails past them.
describe('widget bundle budgets', () => {
  test('widget.js ≤ 3 KiB and widget-panel.js ≤ 30 KiB gzipped', async () => {
    const { loader, panel } = await buildWidget()
    expect(BUDGETS).toEqual({ 'widget.js': 3072, 'widget-panel.js': 30720 })
    for (const file of [loader, panel]) {
      expect(file.gzipped, `${file.name} is ${file.gzipped} bytes gzipped`).toBeLessThanOrEqual(BUDGETS[file.name])
    }
  })

  test('both are self-contained IIFEs; the loader asks for the panel by its content hash', async () => {
    const { loader, panel } = await buildWidget()
    for (const file of [loader, panel]) {
      expect(file.code).not.toMatch(/^\s*(import|export)\s/m)
      expect(file.code).not.toContain('require(')
    }
    expect(loader.code).toContain(`widget-panel.js?v=`)
    expect(loader.code).toContain(panel.hash)
  })
})

describe('widget bundle contents', () => {
  test('the panel carries every language; the loader only the launcher\'s name in them', async () => {
    const { loader, panel } = await buildWidget()
    // The bundles are ASCII: esbuild writes other characters as \x.. and \u.... escapes.
    const escaped = (word: string) => [...word].map((char) => {
      const code = char.charCodeAt(0)
      return code < 0x80 ? char : code < 0x100 ? `\\x${code.toString(16).toUpperCase()}` : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`
    }).join('')
    const has = (code: string, word: string) => code.includes(escaped(word))
    for (const word of ['Titel', 'タイトル', 'العنوان', 'כותרת', 'Título', 'Titre']) expect(has(panel.code, word), word).toBe(true)
    for (const word of ['フィードバック', 'ملاحظات', 'משוב', 'Avis', 'Comentarios']) expect(has(loader.code, word), word).toBe(true)
    expect(has(loader.code, 'Titel')).toBe(false)
    expect(has(loader.code, 'Roadmap')).toBe(false)
    expect(/^[\x00-\x7f]*$/.test(loader.code + panel.code)).toBe(true)
  })
})
