import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { bearerAccess, readApiKey, SCOPES, type BearerResolved } from '../../plugins/auth.ts'
import { JsonRpcInvalidRequest, JsonRpcResponse, ProtectedResource } from './model.ts'
import type { Tool } from './tools.ts'

/**
 * The MCP SDK and the tools' zod schemas (~25 MB of memory) load on the first `/mcp` request, not
 * at start-up: most processes never serve one.
 */
function mcpRuntime() {
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js') as typeof import('@modelcontextprotocol/sdk/server/mcp.js')
  const { WebStandardStreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')
  const { TOOLS } = require('./tools.ts') as typeof import('./tools.ts')
  const { CHANGELOG_TOOLS } = require('../changelog/mcp.ts') as typeof import('../changelog/mcp.ts')
  const tools: Tool[] = [...TOOLS, ...CHANGELOG_TOOLS]
  return { McpServer, WebStandardStreamableHTTPServerTransport, tools, byName: new Map(tools.map((tool) => [tool.name, tool])) }
}
let runtime: ReturnType<typeof mcpRuntime> | undefined
const loaded = () => (runtime ??= mcpRuntime())

const tags = ['MCP']
const SERVER_INFO = { name: 'chorus', title: 'Chorus feedback', version: '1.0.0' }
const INSTRUCTIONS = 'Chorus holds customer feedback: boards of posts (feature requests, bugs) with votes, comments, statuses and labels. Search before creating, vote for existing requests on behalf of the customer, and link posts with their url.'

function toolError(error: ApiError): CallToolResult {
  const body = { code: error.code, message: error.message, ...error.extra, ...(error.issues ? { detail: error.issues } : {}) }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}

export const mcpModule = (ctx: AppContext) => {
  const bearer = bearerAccess(ctx)
  const resource = `${ctx.config.baseUrl}/mcp`
  const metadataUrl = `${ctx.config.baseUrl}/.well-known/oauth-protected-resource`
  const challenge = (extra = '') => `Bearer resource_metadata="${metadataUrl}"${extra}`

  const metadata = () => ({
    resource,
    authorization_servers: [ctx.config.baseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Chorus MCP server',
  })

  async function call(tool: Tool, resolved: BearerResolved, args: unknown): Promise<CallToolResult> {
    try {
      // Checked again at call time: the subscription gate for writes, and the scope for batched calls.
      bearer.authorize(resolved, { scope: tool.scope }, undefined, tool.write)
      const result = await tool.run(ctx, resolved, args)
      return { content: [{ type: 'text', text: JSON.stringify(result) }] }
    } catch (error) {
      if (error instanceof ApiError) return toolError(error)
      ctx.log.error('MCP tool failed', { tool: tool.name, error: error instanceof Error ? error.message : String(error) })
      return toolError(new ApiError('INTERNAL', 'The tool failed unexpectedly'))
    }
  }

  /** A fresh server per request: the transport is stateless, so any process can answer any request. */
  function serverFor(resolved: BearerResolved) {
    const { McpServer, tools } = loaded()
    const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS })
    for (const tool of tools) {
      server.registerTool(tool.name, {
        title: tool.title,
        description: `${tool.description} Needs the ${tool.scope} scope.`,
        inputSchema: tool.input,
        annotations: { title: tool.title, readOnlyHint: !tool.write, destructiveHint: tool.name === 'merge_posts', idempotentHint: !tool.write, openWorldHint: false },
      }, (args: unknown) => call(tool, resolved, args))
    }
    return server
  }

  /**
   * A tools/call whose scope the credential lacks is answered 403 with an `insufficient_scope` challenge
   * naming the scope, so a client holding an OAuth token can ask the user for more (step-up).
   */
  function missingScope(resolved: BearerResolved, message: unknown): string | null {
    const messages = Array.isArray(message) ? message : [message]
    for (const entry of messages) {
      const request = entry as { method?: unknown; params?: { name?: unknown } } | null
      if (request?.method !== 'tools/call' || typeof request.params?.name !== 'string') continue
      const tool = loaded().byName.get(request.params.name)
      if (!tool) continue
      try {
        bearer.authorize(resolved, { scope: tool.scope }, undefined, false)
      } catch (error) {
        if (error instanceof ApiError && error.code === 'INSUFFICIENT_SCOPE') return tool.scope
      }
    }
    return null
  }

  const unauthenticated = (message: string, error = '') => new ApiError('UNAUTHENTICATED', message, {}, { 'www-authenticate': challenge(error) })

  return new Elysia()
    .get('/.well-known/oauth-protected-resource', metadata, {
      response: { 200: ProtectedResource },
      detail: { operationId: 'getProtectedResourceMetadata', tags, security: [], summary: 'OAuth protected-resource metadata of the MCP server (RFC 9728)', description: 'Where an MCP client learns which authorization server issues tokens for `/mcp` and which scopes exist.' },
    })
    .get('/.well-known/oauth-protected-resource/mcp', metadata, {
      response: { 200: ProtectedResource },
      detail: { operationId: 'getMcpProtectedResourceMetadata', tags, security: [], summary: 'The same metadata at the path-aware location for `/mcp` (RFC 9728 §3.1)', description: 'Clients that derive the metadata address from the resource URL (`/.well-known/oauth-protected-resource` + `/mcp`) find the same document here.' },
    })
    .post('/mcp', async ({ request, set, body }) => {
      const credential = readApiKey(request.headers)
      if (credential === null) throw unauthenticated('Send a bearer credential: an OAuth access token or an API key')
      let resolved: BearerResolved
      try {
        resolved = await bearer.authenticate(credential, set.headers as Record<string, string | number>, 'mcp')
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) throw unauthenticated(error.message, ', error="invalid_token"')
        throw error
      }

      // The body arrives through the app's one bounded JSON parser (malformed JSON is 400 there).
      const message: unknown = body
      if (message === undefined || message === null || typeof message !== 'object') {
        return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: send a JSON-RPC message or batch' }, id: null }), { status: 400, headers: { 'content-type': 'application/json' } })
      }
      const scope = missingScope(resolved, message)
      if (scope) {
        throw new ApiError('INSUFFICIENT_SCOPE', `This credential lacks the ${scope} scope`, { required_scope: scope }, { 'www-authenticate': challenge(`, error="insufficient_scope", scope="${scope}"`) })
      }

      const server = serverFor(resolved)
      const transport = new (loaded().WebStandardStreamableHTTPServerTransport)({ sessionIdGenerator: undefined, enableJsonResponse: true })
      await server.connect(transport)
      try {
        return await transport.handleRequest(request, { parsedBody: message })
      } finally {
        await server.close()
      }
    }, {
      response: { 200: JsonRpcResponse, 400: JsonRpcInvalidRequest },
      detail: {
        operationId: 'mcp', tags, summary: 'Model Context Protocol server (Streamable HTTP, stateless)',
        security: [{ bearerAuth: [] }],
        description: 'JSON-RPC messages of the Model Context Protocol. Authenticate with `Authorization: Bearer` and an API key or an OAuth access token; without one the answer is 401 with `WWW-Authenticate: Bearer resource_metadata=".../.well-known/oauth-protected-resource"`. Tools: `list_boards`, `search_posts`, `find_duplicates`, `get_post`, `create_post`, `update_post`, `comment_on_post`, `vote_on_post`, `merge_posts`; each needs the scope of its REST twin, and calling one without it is 403 `INSUFFICIENT_SCOPE` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`. Errors inside a tool (not found, validation) are tool results with `isError: true` and the error body as text.',
      },
    })
    .get('/mcp', () => {
      throw new ApiError('METHOD_NOT_ALLOWED', 'This MCP server is stateless: send JSON-RPC messages with POST; there is no event stream to open', {}, { allow: 'POST' })
    }, { detail: { hide: true } })
}
