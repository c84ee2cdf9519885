import { Enum, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { t } from 'elysia'
import type { apiKeys } from '../../db/schema/index.ts'
import { SCOPES } from '../../plugins/auth.ts'

export const ScopeList = t.Array(Enum([...SCOPES]), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true })

export const APIKeyCreate = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), scopes: ScopeList }, { additionalProperties: false, $id: 'ApiKeyCreate', examples: [{ name: 'CRM sync', scopes: ['posts:read', 'posts:write'] }] })
export const APIKeyScopesUpdate = t.Object({ scopes: ScopeList }, { additionalProperties: false, $id: 'ApiKeyScopesUpdate', examples: [{ scopes: ['posts:read'] }] })
export const KeyParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, key_id: t.String({ maxLength: 64, examples: ['key_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

const keyFields = {
  id: t.String(),
  name: t.String(),
  start: t.String({ description: '`chorus_sk_` and the first 4 characters, to recognise the key' }),
  scopes: t.Array(t.String()),
  created_at: Timestamp,
  last_used_at: t.Nullable(Timestamp),
}
export const APIKeyResponse = t.Object(keyFields, { $id: 'ApiKey', examples: [{ id: 'key_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'CRM sync', start: 'chorus_sk_3f9a', scopes: ['posts:read', 'posts:write'], last_used_at: '2026-11-23T14:05:12.345Z', created_at: '2026-11-22T09:30:00.000Z' }] })
export const APIKeyCreatedResponse = t.Object({ ...keyFields, key: t.String({ description: 'The full key. Shown only in this response; only its SHA-256 is stored.' }) }, { $id: 'ApiKeyCreated', examples: [{ id: 'key_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'CRM sync', start: 'chorus_sk_3f9a', key: 'chorus_sk_3f9a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b', scopes: ['posts:read', 'posts:write'], last_used_at: null, created_at: '2026-11-22T09:30:00.000Z' }] })

export const toApiKeyResponse = (key: typeof apiKeys.$inferSelect) => ({
  id: key.id,
  name: key.name,
  start: key.start,
  scopes: key.scopes,
  created_at: key.createdAt.toISOString(),
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
})
