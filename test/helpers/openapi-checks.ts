// The completeness checks test/api/openapi.test.ts runs over the generated document, as functions of
// any document, so the checks themselves are tested on documents made to fail them.

type Doc = { paths: Record<string, Record<string, any>>; webhooks?: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } }

/** Every operation: the paths', and the deliveries of the `webhooks` section (named `webhook <event>`). */
export const operationsOf = (doc: Doc) => [
  ...Object.entries(doc.paths).flatMap(([path, byMethod]) => Object.entries<any>(byMethod).map(([method, operation]) => ({ path, method, operation }))),
  ...Object.entries(doc.webhooks ?? {}).flatMap(([event, byMethod]) => Object.entries<any>(byMethod).map(([method, operation]) => ({ path: `webhook ${event}`, method, operation }))),
]

/** The schema a `$ref` names, or the schema itself. */
const resolve = (doc: Doc, schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema)

/** An example on the schema, on the items of an array, or on a branch of a nullable. */
function hasExample(doc: Doc, schema: any): boolean {
  const resolved = resolve(doc, schema)
  if (!resolved) return false
  if (Array.isArray(resolved.examples) && resolved.examples.length > 0) return true
  if (resolved.type === 'array') return hasExample(doc, resolved.items)
  return (resolved.anyOf ?? []).some((branch: any) => branch.type !== 'null' && hasExample(doc, branch))
}

const isInline = (schema: any) => schema && !schema.$ref && (schema.type === 'object' || (schema.type === 'array' && schema.items?.type === 'object'))

/** `METHOD path: no summary, ...` for each operation lacking a summary, a description or an example. */
export function missingDocumentation(doc: Doc): string[] {
  return operationsOf(doc).flatMap(({ path, method, operation }) => {
    const gaps: string[] = []
    if (!operation.summary?.trim()) gaps.push('summary')
    if (!operation.description?.trim()) gaps.push('description')
    const body = operation.requestBody?.content?.['application/json']?.schema
    if (body && !hasExample(doc, body)) gaps.push('request example')
    // A body of another media type (a form, a raw message) with an example shows the request too.
    const otherBody = Object.values<any>(operation.requestBody?.content ?? {}).some((media) => media?.example !== undefined || hasExample(doc, media?.schema))
    const success = Object.entries<any>(operation.responses ?? {}).filter(([status]) => status.startsWith('2'))
    const json = success.map(([, response]) => response.content?.['application/json']?.schema).filter(Boolean)
    for (const schema of json) if (!hasExample(doc, schema)) gaps.push('response example')
    // A 204 (or a redirect) without a body: its example is the request itself, through its path or query parameters.
    if (!body && !otherBody && json.length === 0 && !(operation.parameters ?? []).some((parameter: any) => (parameter.in === 'path' || parameter.in === 'query') && hasExample(doc, parameter.schema))) gaps.push('parameter example')
    return gaps.length ? [`${method.toUpperCase()} ${path}: no ${gaps.join(', ')}`] : []
  })
}

/** `METHOD path: where` for each request body or response that is an inline object instead of a named schema. */
export function inlineSchemas(doc: Doc): string[] {
  return operationsOf(doc).flatMap(({ path, method, operation }) => {
    const body = operation.requestBody?.content?.['application/json']?.schema
    const responses = Object.entries<any>(operation.responses ?? {}).map(([status, response]) => [status, response.content?.['application/json']?.schema] as const)
    return [
      ...(isInline(body) ? [`${method.toUpperCase()} ${path}: request body`] : []),
      ...responses.filter(([, schema]) => isInline(schema)).map(([status]) => `${method.toUpperCase()} ${path}: ${status}`),
    ]
  })
}
