// Every SDK operation must be a route of the generated document, exactly: method, path and parameter
// names. routes.ts fails to compile otherwise; this catches the same at run time, against the committed
// sdk/openapi.json, with a message that names the operation.
import { describe, expect, test } from 'bun:test'
import document from '../../sdk/openapi.json'
import { ROUTES } from '../../sdk/src/index.ts'

const documented = document.paths as Record<string, Record<string, unknown>>

describe('ROUTES and the OpenAPI document', () => {
  test('every SDK operation is documented with exactly its method and path', () => {
    const missing = Object.entries(ROUTES).flatMap(([name, route]) => {
      const [method, path] = route.split(' ') as [string, string]
      return documented[path]?.[method.toLowerCase()] ? [] : [`${name}: ${route} is not in sdk/openapi.json`]
    })
    expect(missing).toEqual([])
  })

  test("each operation's name is the server's operationId", () => {
    const renamed = Object.entries(ROUTES).flatMap(([name, route]) => {
      const [method, path] = route.split(' ') as [string, string]
      const operationId = (documented[path]?.[method.toLowerCase()] as { operationId?: string } | undefined)?.operationId
      return operationId === name ? [] : [`${name}: the server calls ${route} ${operationId}`]
    })
    expect(renamed).toEqual([])
  })
})
