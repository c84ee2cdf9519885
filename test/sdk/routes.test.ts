// The SDK picks up generated types only for routes documented with exactly its method, path and
// parameter names; this catches a server route that landed under other parameter names, which would
// otherwise leave the SDK on its hand-written types without anyone noticing.
import { describe, expect, test } from 'bun:test'
import document from '../../sdk/openapi.json'
import { ROUTES } from '../../sdk/src/index.ts'

const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}')

describe('ROUTES and the OpenAPI document', () => {
  test('a documented route has the parameter names the SDK uses', () => {
    const documented = Object.keys(document.paths)
    const mismatches = Object.entries(ROUTES).flatMap(([name, route]) => {
      const path = route.slice(route.indexOf(' ') + 1)
      const twin = documented.find((candidate) => shape(candidate) === shape(path) && candidate !== path)
      return twin ? [`${name}: the SDK says ${path}, the server documents ${twin}`] : []
    })
    expect(mismatches).toEqual([])
  })
})
