// `npm run build:widget`: bundles widget/src with esbuild into widget/dist/widget.js (the loader) and
// widget/dist/widget-panel.js, and prints their gzipped sizes against the budgets.
import { BUDGETS, buildWidget, DIST_DIR } from '../widget/build.ts'

const { loader, panel } = await buildWidget({ write: true })
let over = false
for (const file of [loader, panel]) {
  const budget = BUDGETS[file.name]
  over ||= file.gzipped > budget
  console.log(`${DIST_DIR}/${file.name}: ${file.code.length} bytes, ${file.gzipped} gzipped (budget ${budget})${file.gzipped > budget ? '  OVER BUDGET' : ''}`)
}
if (over) process.exit(1)
