import { t } from 'elysia'

export const ProtectedResource = t.Object({
  resource: t.String({ description: 'This MCP server\'s URL' }),
  authorization_servers: t.Array(t.String(), { description: 'Issuers whose tokens it accepts (RFC 8414 metadata at their root)' }),
  scopes_supported: t.Array(t.String()),
  bearer_methods_supported: t.Array(t.String()),
  resource_name: t.String(),
}, { $id: 'ProtectedResourceMetadata', description: 'ProtectedResourceMetadata (RFC 9728)', examples: [{ resource: 'https://chorus.example.com/mcp', authorization_servers: ['https://chorus.example.com'], scopes_supported: ['posts:read'], bearer_methods_supported: ['header'], resource_name: 'Chorus MCP server' }] })

export const JsonRpcResponse = t.Object({
  jsonrpc: t.Literal('2.0'),
  id: t.Union([t.String(), t.Number(), t.Null()]),
  result: t.Optional(t.Record(t.String(), t.Unknown())),
  error: t.Optional(t.Object({ code: t.Integer(), message: t.String(), data: t.Optional(t.Unknown()) })),
}, { $id: 'JsonRpcResponse', description: 'JsonRpcResponse: the MCP answer (`result` or `error`); requests that are only notifications get 202 without a body', examples: [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '[{"slug":"ideas","name":"Ideas"}]' }] } }] })

/** A body that is not a JSON-RPC message or batch: answered with a JSON-RPC error object, as MCP clients expect. */
export const JsonRpcInvalidRequest = t.Object({
  jsonrpc: t.Literal('2.0'),
  error: t.Object({ code: t.Integer({ examples: [-32600] }), message: t.String() }),
  id: t.Null(),
}, { $id: 'JsonRpcInvalidRequest', description: 'Not a JSON-RPC message or batch (code -32600)', examples: [{ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: send a JSON-RPC message or batch' }, id: null }] })
