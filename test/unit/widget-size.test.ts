import { describe, expect, test } from 'bun:test'
import { BUDGETS, buildWidget } from '../../widget/build.ts'

// CONTRACT §12: the loader stays under 3 KiB gzipped and the panel under 30 KiB; CI fails past them.
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
